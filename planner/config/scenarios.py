"""Where scenario files live and how a name or path becomes one: ``scenarios/<kind>/<name>.yaml``."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import planner
from planner.config.yamlfile import probe, read_yaml
from planner.errors import ConfigError, UnknownNameError, shown_path


def scenarios_dir() -> Path:
    """``scenarios/`` of a source checkout, else the copy bundled into the wheel."""
    root = Path(planner.__file__).resolve().parent
    checkout = root.parent / "scenarios"
    return checkout if checkout.is_dir() else root / "_bundled" / "scenarios"


def resolve_scenario(path_or_name: str | os.PathLike[str], kind: str) -> Path:
    """A YAML path, or a bare name looked up as ``scenarios/<kind>/<name>.yaml``."""
    singular = kind.rstrip("s")
    if not isinstance(path_or_name, (str, os.PathLike)):
        raise ConfigError(
            f"a {singular} file is a YAML path or a bundled name, not"
            f" {type(path_or_name).__name__} {path_or_name!r}",
            key_path=singular,
            hint=f"e.g. a name from scenarios/{kind} or the path of a .yaml file",
        )
    path_or_name = os.fspath(path_or_name)
    if not str(path_or_name).strip():
        raise ConfigError(
            f"the {singular} file name is blank",
            key_path=singular,
            hint=f"name a bundled {singular} file (scenarios/{kind}) or the path of a .yaml file",
        )
    path = Path(path_or_name).expanduser()
    found = probe(path)  # a name too long for the file system is a ConfigError, not an OSError
    folder = scenarios_dir() / kind
    if path.suffix in (".yaml", ".yml") or found is not None or "/" in path_or_name:
        if found is None:
            raise ConfigError(
                f"no such file {shown_path(path_or_name)!r}",
                hint=missing_file_hint(path_or_name, folder, f"{singular} file")
                or f"pass a YAML path or a bundled {singular} name",
            )
        return path  # a directory or an unreadable file: _read_yaml says what is wrong
    candidate = folder / f"{path_or_name}.yaml"
    if (status := probe(candidate)) is not None and stat.S_ISREG(status.st_mode):
        return candidate
    names = sorted(p.stem for p in folder.glob("*.yaml")) if folder.is_dir() else []
    raise UnknownNameError(singular + " file", path_or_name, names)


def missing_file_hint(text: str, folder: Path, what: str) -> str | None:
    """The fix for a YAML path ``text`` that names no file, where one is near: the path with
    ``.yaml`` added or ``.yml`` and ``.yaml`` swapped, or a bundled file of ``folder`` typed as a
    file name (``8xh100-hgx.yaml`` for the bundled ``8xh100-hgx``); None when none is."""
    path = Path(text).expanduser()
    if path.suffix == ".yml":
        near = [path.with_suffix(".yaml")]
    elif path.suffix == ".yaml":
        near = [path.with_suffix(".yml")]
    else:
        near = [path.with_name(path.name + ".yaml"), path.with_name(path.name + ".yml")]
    for candidate in near:
        status = probe(candidate)
        if status is not None and stat.S_ISREG(status.st_mode):
            return f"did you mean {str(candidate)!r}?"
    if path.parent == Path(".") and path.suffix in (".yaml", ".yml"):
        status = probe(folder / f"{path.stem}.yaml")
        if status is not None and stat.S_ISREG(status.st_mode):
            return (
                f"did you mean the bundled {what} {path.stem!r}? A bundled name is written "
                "without .yaml; a path is read from the current folder"
            )
    return None


def read_mapping(path: Path, kind: str = "scenario") -> dict[str, Any]:
    raw = read_yaml(path, what=f"{kind} file")
    if not isinstance(raw, dict):
        raise ConfigError("expected a mapping of keys to values at the top level", file=str(path))
    return raw
