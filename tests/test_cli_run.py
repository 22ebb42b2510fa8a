"""The ``planner`` program (planner.cli.run): main with the garbage collector kept off the start-up's
objects, the same exit codes and output as main."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import types
from collections.abc import Iterator

import click
import pytest

import planner.cli as cli


@pytest.fixture
def collector() -> Iterator[None]:
    """run() freezes this process's objects and collects less often: thaw them again, and leave
    the collector on at its thresholds."""
    thresholds = gc.get_threshold()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
        gc.enable()


@pytest.fixture(autouse=True)
def program_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """run() sets the program's environment (PROGRAM_ENVIRONMENT) in this process and may put its
    stand-in for pydantic's plugin loader in sys.modules: monkeypatch records both as they are
    (set or not), so the tests after these run with the process's own settings and pydantic's own
    loader (a delenv or delitem of what is not there records nothing: set first, then remove)."""
    for name in cli.PROGRAM_ENVIRONMENT:
        unset = name not in os.environ
        monkeypatch.setenv(name, os.environ.get(name, ""))
        if unset:
            monkeypatch.delenv(name)
    key = cli._PYDANTIC_PLUGIN_LOADER
    absent = key not in sys.modules
    monkeypatch.setitem(sys.modules, key, sys.modules.get(key, types.ModuleType(key)))
    if absent:
        monkeypatch.delitem(sys.modules, key)


def test_run_pauses_the_collector_until_the_command_is_loaded(
    monkeypatch: pytest.MonkeyPatch, collector: None
) -> None:
    seen: dict[str, bool] = {}

    @click.group(cls=cli.PlannerGroup)
    def fake() -> None:
        seen["group"] = gc.isenabled()

    @fake.command()
    def hello() -> None:
        seen["command"] = gc.isenabled()

    monkeypatch.setattr(cli, "main", fake)
    monkeypatch.setattr(sys, "argv", ["planner", "hello"])
    with pytest.raises(SystemExit) as exit_:
        cli.run()
    assert exit_.value.code == 0
    # off while click parses and loads the command, back on for the command's own work
    assert seen == {"group": True, "command": True}
    assert gc.isenabled()
    assert gc.get_freeze_count() > 0  # what was left at the end is out of the collector's way
    # the command's own short-lived objects are collected less often than Python's default 700
    assert gc.get_threshold()[0] == cli.COMMAND_GC_THRESHOLD > 700


def test_run_resumes_the_collector_when_no_command_runs(
    monkeypatch: pytest.MonkeyPatch, collector: None
) -> None:
    monkeypatch.setattr(sys, "argv", ["planner", "--version"])
    with pytest.raises(SystemExit) as exit_:
        cli.run()
    assert exit_.value.code == 0
    assert gc.isenabled()


def test_main_alone_never_touches_the_collector(collector: None) -> None:
    gc.unfreeze()
    thresholds = gc.get_threshold()
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == thresholds


@pytest.mark.parametrize(
    ("args", "code", "text"),
    [
        (["--version"], 0, "planner"),
        (["quote", "--workload", "no-such-workload", "--deadline", "24h"], 2, "unknown workload"),
    ],
)
def test_the_program_keeps_mains_exit_codes_and_messages(
    args: list[str], code: int, text: str
) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "planner", *args], capture_output=True, text=True, check=False
    )
    assert out.returncode == code
    assert text in out.stdout + out.stderr


def test_the_program_sets_its_environment_unless_told_otherwise(
    monkeypatch: pytest.MonkeyPatch, collector: None
) -> None:
    # one BLAS thread, no pydantic plugin discovery: set before the command loads NumPy and
    # pydantic (planner.cli itself imports neither)
    code = (
        "import sys\nimport planner.cli\nprint('numpy' in sys.modules, 'pydantic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"
    for name in cli.PROGRAM_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "argv", ["planner", "--version"])
    with pytest.raises(SystemExit):
        cli.run()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == "__all__"
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")  # the user's own settings stand
    monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", "")
    with pytest.raises(SystemExit):
        cli.run()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "4"
    assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == ""


@pytest.mark.parametrize(
    ("setting", "loader_imported"),
    [
        ("__all__", False),  # plugins off (the program's default): pydantic's loader stood in for
        ("", True),  # the user asked for plugin discovery: pydantic's own loader reads entry points
    ],
)
def test_the_program_skips_pydantics_plugin_loader_only_where_plugins_are_off(
    setting: str, loader_imported: bool
) -> None:
    code = (
        "import sys\nimport planner.cli as cli\nsys.argv = ['planner', 'workloads', 'list']\n"
        "try:\n    cli.run()\nexcept SystemExit:\n    pass\n"
        "from pydantic import BaseModel\nclass M(BaseModel):\n    x: int\n"
        "print(M(x=1).x, 'importlib.metadata' in sys.modules, file=sys.stderr)"
    )
    env = {**os.environ, "PYDANTIC_DISABLE_PLUGINS": setting}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stderr.strip().splitlines()[-1] == f"1 {loader_imported}"


def test_the_stand_in_plugin_loader_gives_way_to_the_real_one_for_anything_else() -> None:
    # a pydantic release that reads more of its loader than get_plugins still gets it
    code = (
        "import os, sys\nos.environ['PYDANTIC_DISABLE_PLUGINS'] = '__all__'\n"
        "import planner.cli as cli\ncli._skip_plugin_loader()\n"
        "from pydantic.plugin._loader import get_plugins\nassert tuple(get_plugins()) == ()\n"
        "from pydantic.plugin._loader import _plugins\n"
        "real = sys.modules['pydantic.plugin._loader']\n"
        "print(hasattr(real, '__file__'), callable(real.get_plugins), file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr.strip().splitlines()[-1] == "True True"
