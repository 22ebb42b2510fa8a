"""The house's shape, checked: layers import downwards only, no cycles, outside systems in one room.

    cli -> api -> reports -> quoting -> {optimize -> ownership} -> {workload, catalog} -> config
        -> {schema, gpu_specs, units, errors}          (providers: only under catalog.refresh)

Imports are read from the source (``ast``), including imports inside functions and under
``TYPE_CHECKING``: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "planner"

# Rank of each unit (a top-level module or subpackage of planner): a unit may import units of a
# lower rank, and itself.  Equal ranks may not import each other.
RANKS: dict[str, int] = {
    "data": 0,  # bundled data files (GPU specs, exchange rates), read with importlib.resources
    "errors": 0,
    "units": 0,
    "clock": 0,
    "gpu_specs": 1,
    "schema": 2,
    "config": 3,
    "providers": 4,
    "catalog": 5,
    "workload": 5,
    "ownership": 6,
    "optimize": 7,
    "quoting": 8,
    "reports": 9,
    "api": 10,
    "cli": 11,
    "__main__": 12,
}
# The package's own __init__ is the lazy facade over api (PEP 562); importing `planner` itself
# (for ``planner.__file__`` or ``__version__``) is allowed from anywhere.
ROOT_UNIT = ""
TOP_LEVEL_MODULES = {
    "__init__",
    "__main__",
    "api",
    "errors",
    "schema",
    "units",
    "gpu_specs",
    "clock",
}

# Third-party libraries that belong to one room only.
OWNERS: dict[str, tuple[str, ...]] = {
    "boto3": ("providers",),
    "botocore": ("providers",),
    "google": ("providers",),
    "azure": ("providers",),
    "pulp": ("optimize",),
    "highspy": ("optimize",),
    "cbcbox": ("optimize",),
    "matplotlib": ("reports",),
    "tabulate": ("reports",),
    "click": ("cli",),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> Iterator[tuple[str, int]]:
    """(imported module, line) for every import in ``path``, relative ones resolved."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            # `from planner.workload import compute` imports the submodule planner.workload.compute
            # (the package's __init__ runs too, but that is the package's own business).
            submodules = [f"{target}.{alias.name}" for alias in node.names]
            found = [m for m in submodules if _is_module(m)]
            yield from ((m, node.lineno) for m in found)
            if len(found) < len(submodules):
                yield target, node.lineno


def _is_module(dotted: str) -> bool:
    if not dotted.startswith("planner."):
        return False
    base = PACKAGE.parent.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _unit(module: str) -> str | None:
    """The layer unit of a planner module ('' for the package root), None for other libraries."""
    parts = module.split(".")
    if parts[0] != "planner":
        return None
    return parts[1] if len(parts) > 1 else ROOT_UNIT


def _sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _edges() -> list[tuple[str, str, str, int]]:
    """(importing module, imported module, file, line) between planner modules."""
    known = {_module_name(p) for p in _sources()}
    out = []
    for path in _sources():
        here = _module_name(path)
        for target, line in _imports(path):
            if _unit(target) is not None and target in known and target != here:
                out.append((here, target, str(path.relative_to(PACKAGE.parent)), line))
    return out


def test_every_unit_has_a_rank() -> None:
    units = {_unit(_module_name(p)) for p in _sources()} - {ROOT_UNIT}
    assert units <= set(RANKS), f"give these a layer in RANKS: {sorted(units - set(RANKS))}"


def test_no_top_level_modules_beyond_the_shared_ones() -> None:
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    assert modules <= TOP_LEVEL_MODULES, sorted(modules - TOP_LEVEL_MODULES)


def test_imports_run_down_the_layers() -> None:
    wrong = []
    for here, target, file, line in _edges():
        src, dst = _unit(here), _unit(target)
        if src == dst or dst == ROOT_UNIT or src in (ROOT_UNIT, None) or dst is None:
            continue
        if RANKS[dst] >= RANKS[src]:
            wrong.append(f"{file}:{line}: {here} ({src}) imports {target} ({dst})")
    assert not wrong, "imports against the layer order:\n" + "\n".join(wrong)


def test_providers_are_reached_only_through_the_refresh_path() -> None:
    users = {
        here
        for here, target, _, _ in _edges()
        if _unit(target) == "providers" and _unit(here) != "providers"
    }
    # planner.catalog reads the registry's names (refresh_advice, for a stale-price warning):
    # planner.providers itself loads no adapter, and a quote need not load the refresh path
    assert users <= {"planner.catalog.refresh", "planner.catalog"}, sorted(users)


def test_no_import_cycles_between_modules() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for here, target, _, _ in _edges():
        if target != "planner":
            graph[here].add(target)
    # Tarjan-free check: depth-first search with colours, reporting the first cycle found.
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            pytest.fail("import cycle: " + " -> ".join(cycle))


@pytest.mark.parametrize("library", sorted(OWNERS))
def test_outside_libraries_live_in_their_room(library: str) -> None:
    users = set()
    for path in _sources():
        module = _module_name(path)
        for target, _ in _imports(path):
            if target == library or target.startswith(library + "."):
                users.add(_unit(module))
    assert users <= set(OWNERS[library]), f"{library} imported from {sorted(users)}"
