"""Reading a user's YAML file (workload, hardware, budget) into plain Python values.

Every way a file can go wrong (missing, a directory, unreadable, huge, binary, not UTF-8, invalid
YAML, a key written twice) is a :class:`~planner.errors.ConfigError` naming the file, the line
where it can, and a fix; nothing here lets a ``UnicodeDecodeError`` or ``yaml.YAMLError`` escape.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from planner.errors import ConfigError

# Scenario files are hand-written and a few KB (the bundled ones are 1-3 KB); a budget with 120
# monthly demand values for a dozen GPU classes stays far below this.  A bigger file is almost
# certainly the wrong file, and parsing tens of MB of YAML takes minutes.
MAX_YAML_BYTES = 1024 * 1024


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that rejects a key written twice in one mapping (PyYAML keeps the last)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *base` merges are meant to be overridden
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:  # an unhashable key; the base class reports it
                continue
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f"the key {key!r} appears twice",
                    key_node.start_mark,
                )
            seen.add(key)
        return super().construct_mapping(node, deep)


def parse_yaml(text: str, *, file: str) -> Any:
    """Parse YAML text (pure); errors name ``file``, the line and column."""
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader subclass: no object tags
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = e.problem or e.context or "cannot parse"
        hint = None
        if "'\\t'" in problem or "\t" in problem:
            hint = "indent with spaces; YAML does not allow tabs"
        elif "appears twice" in problem:
            hint = "keep one of the two"
        raise ConfigError(f"not valid YAML{where}: {problem}", file=file, hint=hint) from None
    except yaml.YAMLError as e:
        raise ConfigError(f"not valid YAML: {e}", file=file) from None


def read_bounded(path: Path, *, limit_bytes: int, what: str, hint: str) -> bytes:
    """The bytes of ``path`` (a file, a pipe such as ``<(cat f)``, a device), at most
    ``limit_bytes`` of them: a bigger input (``/dev/zero``, the wrong file) is refused after
    reading one byte more than the limit, never read to the end.  Every failure is a
    ConfigError naming the file and a fix; ``hint`` says what to pass instead of a folder."""
    file = str(path)
    if path.is_dir():
        raise ConfigError(f"is a directory, not a {what}", file=file, hint=hint)
    limit = f"{limit_bytes // 2**20} MiB" if limit_bytes >= 2**20 else f"{limit_bytes} bytes"
    try:
        if path.is_file() and path.stat().st_size > limit_bytes:
            size = path.stat().st_size
            raise ConfigError(
                f"is {size / 2**20:.1f} MiB; a {what} is at most {limit}",
                file=file,
                hint="check that this is the right file",
            )
        with open(path, "rb") as fh:
            data = fh.read(limit_bytes + 1)
    except FileNotFoundError:
        raise ConfigError("file not found", file=file, hint="check the path") from None
    except PermissionError:
        raise ConfigError(
            "cannot read the file (no permission)",
            file=file,
            hint="check the file's permissions, or copy it somewhere you can read",
        ) from None
    except OSError as e:
        raise ConfigError(
            f"cannot read the file ({e.strerror or e})", file=file, hint="check the path"
        ) from None
    if len(data) > limit_bytes:
        raise ConfigError(
            f"is more than {limit}; a {what} is at most {limit}",
            file=file,
            hint="check that this is the right file",
        )
    return data


def read_yaml(path: Path, *, what: str = "YAML") -> Any:
    """Read and parse ``path``; ``what`` names the kind of file in messages ("workload file")."""
    file = str(path)
    data = read_bounded(
        path, limit_bytes=MAX_YAML_BYTES, what=what, hint="pass the path of a .yaml file"
    )
    if b"\x00" in data:
        raise ConfigError(
            f"looks like a binary file, not a {what}",
            file=file,
            hint="pass the YAML text file",
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise ConfigError(
            f"is not UTF-8 text (byte 0x{data[e.start]:02x} on line {line})",
            file=file,
            hint="save the file as UTF-8",
        ) from None
    return parse_yaml(text, file=file)
