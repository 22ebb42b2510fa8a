"""Reading a user's YAML file (workload, hardware, budget) into plain Python values.

Every way a file can go wrong (missing, a directory, unreadable, huge, binary, not UTF-8, invalid
YAML, a key written twice) is a :class:`~planner.errors.ConfigError` naming the file, the line
where it can, and a fix; nothing here lets a ``UnicodeDecodeError`` or ``yaml.YAMLError`` escape.
"""

from __future__ import annotations

import copy
import errno
import functools
import hashlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.errors import ConfigError, shown_path

if TYPE_CHECKING:
    import yaml

# Scenario files are hand-written and a few KB (the bundled ones are 1-3 KB); a budget with 120
# monthly demand values for a dozen GPU classes stays far below this.  A bigger file is almost
# certainly the wrong file, and parsing tens of MB of YAML takes minutes.
MAX_YAML_BYTES = 1024 * 1024


@functools.cache
def _unique_key_loader() -> type[yaml.SafeLoader]:
    """The SafeLoader :func:`parse_yaml` reads with, made on first use: importing PyYAML compiles
    its reader's and resolver's patterns (~8 ms of a quote on a 2-core machine, which reads no
    YAML where its files have compact copies, :func:`read_yaml`)."""
    import yaml

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

        def construct_yaml_timestamp(self, node: yaml.ScalarNode) -> Any:
            """A date or time as YAML reads it; one shaped like a date that is none (``2024-13-45``,
            ``2025-02-30``) stays the text it is, for the key it belongs to to refuse by name
            ("prices_as_of: expected a date like 2026-01-01, got '2024-13-45'").  PyYAML raised
            ValueError ("month must be in 1..12") out of the parser, with no file, key or line."""
            try:
                return super().construct_yaml_timestamp(node)
            except (ValueError, OverflowError):
                return self.construct_scalar(node)

        def construct_yaml_int(self, node: yaml.ScalarNode) -> Any:
            """A whole number as YAML reads it; one thousands of digits long (past Python's limit on
            converting text to int) is named at its line.  PyYAML raised ValueError ("Exceeds the
            limit (4300 digits) for integer string conversion") out of the parser, a traceback.
            YAML 1.1's octal (``010``) and base-60 (``1:30``) forms are refused at their line:
            they were read without a word as 8 and 90 (``lora_rank: 010``, ``hours: 1:30``)."""
            _refuse_surprising_number(str(node.value), node, int_value=True)
            try:
                return super().construct_yaml_int(node)
            except ValueError:
                digits = sum(c.isdigit() for c in str(node.value))
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"a number {digits:,} digits long, past any value a scenario holds",
                    node.start_mark,
                ) from None

        def construct_yaml_float(self, node: yaml.ScalarNode) -> Any:
            """A number with a point as YAML reads it; YAML 1.1's base-60 form (``1:30.5``) is
            refused at its line, as :meth:`construct_yaml_int`'s."""
            _refuse_surprising_number(str(node.value), node, int_value=False)
            return super().construct_yaml_float(node)

    def _refuse_surprising_number(text: str, node: yaml.ScalarNode, *, int_value: bool) -> None:
        plain = text.replace("_", "").lstrip("+-")
        if ":" in plain:
            parts = plain.split(":")
            value = 0.0
            for part in parts:
                value = value * 60 + float(part)
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"{text} is a base-60 number to YAML ({value:g}), not a time: write the value "
                f"as one number in the key's unit (1:30 hours is 1.5), or quote it to keep it as "
                "text",
                node.start_mark,
            )
        if int_value and len(plain) > 1 and plain[0] == "0" and plain.isdigit():
            octal = int(plain, 8) if set(plain) <= set("01234567") else None
            read = f"the octal number {octal}" if octal is not None else "octal"
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"{text} is {read} to YAML (a leading 0): write {int(plain)} without the 0, or "
                "quote it to keep it as text",
                node.start_mark,
            )

    # PyYAML dispatches on the class's table of constructors, not on the method: point it at these
    _UniqueKeyLoader.add_constructor(
        "tag:yaml.org,2002:timestamp", _UniqueKeyLoader.construct_yaml_timestamp
    )
    _UniqueKeyLoader.add_constructor("tag:yaml.org,2002:int", _UniqueKeyLoader.construct_yaml_int)
    _UniqueKeyLoader.add_constructor(
        "tag:yaml.org,2002:float", _UniqueKeyLoader.construct_yaml_float
    )
    return _UniqueKeyLoader


def parse_packaged_yaml(text: str) -> Any:
    """Parse one of planner's own data files (pure): with libyaml's parser where PyYAML has it
    (several times faster than the pure-Python one), else the pure one; a safe loader either way.
    The user's own files go through :func:`parse_yaml`, whose errors name the file and line."""
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


# What was left open, by PyYAML's context for the error: a quote, a [ or a {.
_LEFT_OPEN = {
    "while scanning a quoted scalar": ("the quote", ""),
    "while parsing a flow sequence": ("the [", " with ]"),
    "while parsing a flow mapping": ("the {", " with }"),
}


def _syntax_fix(e: Any) -> str | None:
    """The fix for a YAML syntax error PyYAML names in its own words: a quote, ``[`` or ``{`` left
    open (where it was opened: the error's line is the end of the file), a line without its colon,
    a colon inside a value.  Was the parser's words alone ("found unexpected end of stream")."""
    context, problem, opened = e.context or "", e.problem or "", e.context_mark
    at = f"line {opened.line + 1}, column {opened.column + 1}" if opened else "the line named"
    if context in _LEFT_OPEN:
        what, closer = _LEFT_OPEN[context]
        return f"close {what} opened at {at}{closer}"
    if context == "while scanning a simple key":
        return (
            f"{at.split(',')[0]} is not key: value: add the colon, or indent it under the key "
            "above as part of its value"
        )
    if problem == "mapping values are not allowed here":
        return (
            "a colon and a space inside a value start a key: quote the value "
            '(description: "Note: ..."), or indent the line as its neighbours are'
        )
    if context.startswith("while parsing a block") and "'<block" in problem:
        return f"check the indentation: the keys of the mapping opened at {at} start in one column"
    return None


def _tab_fix(text: str, mark: Any) -> str:
    """The fix for a tab: indentation (spaces only), or a tab after a key or value on its line
    (was "indent with spaces" for ``gpus_per_machine: 8<TAB>``, which indents nothing)."""
    if mark is not None:
        lines = text.splitlines()
        if 0 <= mark.line < len(lines):
            before = lines[mark.line][: mark.column]
            if before.strip():
                return f"remove the tab after {before.strip()!r}; YAML takes spaces only"
    return "indent with spaces; YAML does not allow tabs"


def parse_yaml(text: str, *, file: str) -> Any:
    """Parse YAML text (pure); errors name ``file``, the line and column."""
    import yaml

    try:
        return yaml.load(text, Loader=_unique_key_loader())  # a SafeLoader subclass: no object tags
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = e.problem or e.context or "cannot parse"
        hint = None
        if "'\\t'" in problem or "\t" in problem:
            hint = _tab_fix(text, mark)
        elif "another document" in problem:
            # was the parser's words alone ("but found another document")
            line = f" (line {mark.line + 1})" if mark else ""
            hint = (
                f"a file holds one document: remove the '---'{line} and what follows it, or put "
                "the second document in a file of its own"
            )
        elif "appears twice" in problem:
            hint = "keep one of the two"
        elif "digits long" in problem:
            hint = "write the number the key means in e-notation, e.g. 1.5e9"
        else:
            hint = _syntax_fix(e)
        raise ConfigError(f"not valid YAML{where}: {problem}", file=file, hint=hint) from None
    except yaml.YAMLError as e:
        raise ConfigError(f"not valid YAML: {e}", file=file) from None
    except RecursionError:
        # PyYAML composes nested lists and mappings recursively: a few thousand ``[`` deep
        # exhausts Python's stack (no hand-written scenario nests more than a few levels)
        raise ConfigError(
            "not valid YAML: lists or mappings nested too deeply to read",
            file=file,
            hint="check that this is the right file; a scenario nests a few levels at most",
        ) from None


# What to do with a text file in UTF-16 (what Windows PowerShell 5's ``>`` and ``Out-File`` write).
SAVE_AS_UTF8 = (
    "save it as UTF-8 (Windows PowerShell's > writes UTF-16: use | Out-File -Encoding utf8, "
    "or your editor's Save As with UTF-8)"
)


def wide_unicode(data: bytes) -> str | None:
    """``"UTF-16"`` or ``"UTF-32"`` where ``data`` is text in that encoding (a byte-order mark,
    or a NUL byte beside every ASCII letter), else None: such a file is text, not binary, and
    saving it as UTF-8 is the fix."""
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "UTF-32"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16"
    sample = data[:4096]
    half = len(sample) // 2
    if half >= 4:  # without a byte-order mark: every other byte of ASCII text is NUL, no other
        nuls = sorted((sample[0::2].count(0), sample[1::2].count(0)))
        if nuls[0] <= 0.1 * half and nuls[1] >= 0.9 * half:
            return "UTF-16"
    return None


def not_utf8(data: bytes, error: UnicodeDecodeError) -> str:
    """Where ``data`` stops being UTF-8, for an error message: the first bad byte and its line
    (or, for UTF-16 text, that encoding's name)."""
    wide = wide_unicode(data)
    if wide is not None:
        return f"is {wide} text, not UTF-8"
    line = data[: error.start].count(b"\n") + 1
    return f"is not UTF-8 text (byte 0x{data[error.start]:02x} on line {line})"


def read_bounded(path: Path, *, limit_bytes: int, what: str, hint: str) -> bytes:
    """The bytes of ``path`` (a file, a pipe such as ``<(cat f)``, a device), at most
    ``limit_bytes`` of them: a bigger input (``/dev/zero``, the wrong file) is refused after
    reading one byte more than the limit, never read to the end.  Every failure is a
    ConfigError naming the file and a fix (:func:`read_failed`); ``hint`` says what to pass
    instead of a folder."""
    file = str(path)
    limit = f"{limit_bytes // 2**20} MiB" if limit_bytes >= 2**20 else f"{limit_bytes} bytes"
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise ConfigError(f"is a directory, not a {what}", file=file, hint=hint)
        if stat.S_ISREG(info.st_mode) and info.st_size > limit_bytes:
            raise ConfigError(
                f"is {info.st_size / 2**20:.1f} MiB; a {what} is at most {limit}",
                file=file,
                hint="check that this is the right file",
            )
        with open(path, "rb") as fh:
            data = fh.read(limit_bytes + 1)
    except OSError as e:
        raise read_failed(path, e) from None
    if len(data) > limit_bytes:
        raise ConfigError(
            f"is more than {limit}; a {what} is at most {limit}",
            file=file,
            hint="check that this is the right file",
        )
    return data


# What a failed read means and what to do, by errno; anything else: the system's reason.
_READ_FAILURES: dict[int, tuple[str, str]] = {
    errno.ENOENT: ("file not found", "check the path"),
    errno.ENOTDIR: (
        "file not found: part of the path is a file, not a folder",
        "check the path",
    ),
    errno.ENAMETOOLONG: (
        "cannot read the file (the name is too long for the file system)",
        "check the path; a file name is at most 255 bytes",
    ),
    errno.EACCES: (
        "cannot read the file (no permission)",
        "check the file's permissions, or copy it somewhere you can read",
    ),
    errno.EPERM: (
        "cannot read the file (no permission)",
        "check the file's permissions, or copy it somewhere you can read",
    ),
    errno.ELOOP: ("cannot read the file (a loop of symbolic links)", "check the path's links"),
}


def read_failed(path: str | os.PathLike[str], e: OSError) -> ConfigError:
    """A failed read of a user's file (workload, hardware, budget, price list) in the user's
    words: the file, why, and what to do.  The one translator of read errors, so a long name,
    a missing folder or a file where a folder should be never escapes as an ``OSError``."""
    reason, fix = _READ_FAILURES.get(
        e.errno or 0, (f"cannot read the file ({e.strerror or e})", "check the path")
    )
    return ConfigError(reason, file=shown_path(path), hint=fix)


def probe(path: str | os.PathLike[str]) -> os.stat_result | None:
    """``path``'s status, or None when nothing is there (missing, or a file where a folder
    should be); a path the file system refuses (too long, no permission) is a ConfigError from
    :func:`read_failed`.  ``Path.exists()`` and ``is_dir()`` raise for those instead."""
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        raise read_failed(path, e) from None


def names_a_path(value: str | os.PathLike[str]) -> bool:
    """Whether ``value`` names a file or folder that exists; False for a name no file system takes
    (too long, a NUL in it), where ``Path.exists()`` raises: such a name is then read as whatever
    else it may be (a preset, an option's value)."""
    try:
        return Path(value).exists()
    except (OSError, ValueError):
        return False


def read_yaml(path: Path, *, what: str = "YAML", compact: Mapping[str, Any] | None = None) -> Any:
    """Read and parse ``path``; ``what`` names the kind of file in messages ("workload file").

    ``compact``: the values of known files by the SHA-256 of their bytes (the bundled scenarios'
    compact copy, ``scripts/compact_data.py``): a file with those very bytes is not parsed, its
    values are copied from there (the same values: the script writes them with PyYAML, and
    ``tests/test_compact_data.py`` reads them back), so a quote of a bundled workload never
    imports PyYAML; any other file (an edited scenario, the user's own) is parsed."""
    file = str(path)
    data = read_bounded(
        path, limit_bytes=MAX_YAML_BYTES, what=what, hint="pass the path of a .yaml file"
    )
    wide = wide_unicode(data)
    if wide is not None:
        raise ConfigError(f"is {wide} text, not UTF-8", file=file, hint=SAVE_AS_UTF8)
    if b"\x00" in data:
        raise ConfigError(
            f"looks like a binary file, not a {what}",
            file=file,
            hint="pass the YAML text file",
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(
            not_utf8(data, e),
            file=file,
            hint="save the file as UTF-8",
        ) from None
    if compact is not None:
        known = compact.get(hashlib.sha256(data).hexdigest())
        if known is not None:
            return copy.deepcopy(known)  # the caller may keep or change what it is given
    return parse_yaml(text, file=file)
