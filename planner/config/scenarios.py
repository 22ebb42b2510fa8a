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
    by_lower = {n.lower(): n for n in names}
    if path_or_name.strip().lower() in by_lower:  # 8XH100-HGX: a bundled name in another case
        return folder / f"{by_lower[path_or_name.strip().lower()]}.yaml"
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
    # 8xh100-hgx.yaml, or scenarios/hardware/8xh100-hgx.yaml as the README's examples write it
    # from a checkout (was "no such file" and no fix outside one)
    bundled_folder = path.parent == Path(".") or path.parent.name == folder.name
    if bundled_folder and path.suffix in (".yaml", ".yml"):
        status = probe(folder / f"{path.stem}.yaml")
        if status is not None and stat.S_ISREG(status.st_mode):
            return (
                f"did you mean the bundled {what} {path.stem!r}? A bundled name is written "
                "alone, without a folder or .yaml; a path is read from the current folder"
            )
    return None


def read_mapping(path: Path, kind: str = "scenario") -> dict[str, Any]:
    raw = read_yaml(path, what=f"{kind} file")
    if not isinstance(raw, dict):
        raise not_a_mapping(raw, kind, str(path))
    return raw


# Where to start a file of each kind from.
_EXAMPLES = {
    "workload": "`planner workloads new NAME --model gpt2 --tokens 50M` writes one to edit",
    "hardware": "copy one of scenarios/hardware/*.yaml",
    "budget": "copy scenarios/budgets/2027-ml-platform.yaml",
}


def not_a_mapping(raw: Any, kind: str, file: str) -> ConfigError:
    """A YAML document that is not a mapping of keys, said as what it is (was: "expected a
    mapping of keys to values at the top level", the same words for an empty file, a list and a
    line of text, and no fix)."""
    if raw is None:
        what = "is empty (or only comments)"
    elif isinstance(raw, list):
        what = "is a YAML list (its lines start with '- ')"
    elif isinstance(raw, str) and raw.lstrip().lower().startswith("provider,region,"):
        # a price list's header: its place is named (was "plain text ... it may be a secret")
        return ConfigError(
            f"is a CSV price list (its header starts provider,region,...); a {kind} file is a "
            "YAML mapping of keys to values",
            file=file,
            hint=f"give a price list with --offers {Path(file).name}"
            + (f"; {_EXAMPLES[kind]}" if kind in _EXAMPLES else ""),
        )
    elif isinstance(raw, str):
        # never quoted: a key, token or .env file given by mistake reads as plain text
        # (was: "holds one text ('AWS_SECRET_ACCESS_KEY=wJalr...')" on stderr)
        what = f"holds plain text ({len(raw):,} characters, not shown: it may be a secret)"
    else:
        kind_of = "number" if isinstance(raw, (int, float)) else "value"
        what = f"holds one {kind_of} ({str(raw)[:40]!r})"
    hint = "write one key: value a line at the top level, not under '- '"
    example = _EXAMPLES.get(kind)
    return ConfigError(
        f"{what}; a {kind} file is a mapping of keys to values",
        file=file,
        hint=f"{hint}; {example}" if example else hint,
    )


# Top-level keys only one kind of scenario file has: a mapping with none of its own kind's and
# two or more of another's is that other kind's file, given where this kind goes.
_KIND_KEYS = {
    "workload": frozenset({"kind", "model", "data", "training", "inference", "pieces", "trials"}),
    "hardware": frozenset(
        {
            "gpu",
            "gpus_per_machine",
            "machines",
            "capex_usd",
            "capex",
            "lifetime_years",
            "power_kw_avg",
            "power_kw_max",
            "pue",
            "electricity_usd_per_kwh",
            "electricity_per_kwh",
            "interconnect",
            "fabric",
        }
    ),
    "budget": frozenset(
        {"classes", "horizon_months", "capex_limit_usd", "start", "workloads", "prices_as_of"}
    ),
}
# Where each kind of file goes.
_GOES_TO = {
    "workload": "planner estimate FILE --gpu GPU, or planner quote --workload FILE",
    "hardware": "planner tco --hardware FILE, planner quote --hardware FILE, or a budget "
    "file's buy: or owned: entries (hardware: FILE)",
    "budget": "planner budget FILE",
}


def check_file_kind(raw: Any, kind: str, *, file: str) -> None:
    """Refuse a scenario file of another kind than ``kind`` (workload, hardware, budget), saying
    which kind it is and where it goes.  Was: its first key refused as unknown ("gpu: unknown
    key", "start: unknown key; did you mean 'lifetime_years'?")."""
    if not isinstance(raw, dict):
        return
    keys = {k for k in raw if isinstance(k, str)}
    if keys & _KIND_KEYS[kind]:
        return
    for other, own in _KIND_KEYS.items():
        if other != kind and len(keys & own) >= 2:
            shown = [k for k in raw if k in own]
            more = ", ..." if len(shown) > 3 else ""
            raise ConfigError(
                f"is a {other} file, not a {kind} file (it has {', '.join(shown[:3])}{more})",
                file=file,
                hint=f"a {other} file goes to {_GOES_TO[other]}; a {kind} file to {_GOES_TO[kind]}",
            )
