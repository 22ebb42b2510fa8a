"""The ``planner`` command line: a thin skin over :mod:`planner.api`.

Each command parses its arguments, calls one library function, renders the result with
:mod:`planner.reports` and echoes it.  Only :class:`~planner.errors.PlannerError` is turned into a
clean message (exit code from the error); anything else is a bug and keeps its traceback.  The
library names fields (``deadline_hours``); each command says which option shows each field
(:func:`planner.cli.params.field_options`).
"""

from __future__ import annotations

import errno
import gc
import os
import sys
import types
from collections.abc import Callable, Mapping
from typing import Any

import click

from planner import __version__
from planner.cli.params import (
    error_text,
    refuse_foreign_digits,
    refuse_misplaced_verbose,
    refuse_repeated_options,
    refuse_stray_positionals,
)
from planner.errors import PlannerError, suggest


class PlannerGroup(click.Group):
    """A click group that reports PlannerError as a one-paragraph message and an exit code.

    Its commands load on first use: ``lazy_commands`` maps a command name to the function that
    imports the command's module and adds its commands to the group.  ``planner offers`` then never
    imports the optimizer, its solvers or the workload model, and ``planner quote`` skips the TCO,
    budget and report modules.
    """

    def __init__(
        self,
        *args: Any,
        lazy_commands: Mapping[str, Callable[[click.Group], None]] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands = dict(lazy_commands or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        load = self.lazy_commands.get(cmd_name)
        if cmd_name not in self.commands and load is not None:
            load(self)
        return super().get_command(ctx, cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        typed = args[0] if args else ""
        if typed and not typed.startswith("-") and typed not in self.list_commands(ctx):
            # was click's "No such command 'qoute'." alone
            raise click.UsageError(f"No such command {typed!r}; {self._fix(typed, ctx)}", ctx)
        resolved = super().resolve_command(ctx, args)
        _end_startup()  # the command and what it imports are loaded
        if resolved[1] is not None:
            refuse_repeated_options(resolved[1], resolved[2])
            refuse_foreign_digits(resolved[1], resolved[2])
            refuse_stray_positionals(resolved[1], resolved[2])
            refuse_misplaced_verbose(resolved[1], resolved[2], str(resolved[0]))
        return resolved

    def _fix(self, typed: str, ctx: click.Context) -> str:
        """The command meant by an unknown word: its own name in another case (QUOTE), the
        nearest name (qoute), --help for help; else the list."""
        names = self.list_commands(ctx)
        if typed.strip().lower() in ("help", "-help", "h", "?"):
            return "help is an option: `planner --help`, or `planner COMMAND --help`"
        by_lower = {name.lower(): name for name in names}
        if typed.strip().lower() in by_lower:
            return f"commands are lower-case: did you mean {by_lower[typed.strip().lower()]!r}?"
        close = suggest(typed.strip().lower(), names, 1)
        if close:
            return f"did you mean {close[0]!r}?"
        return f"the commands are {', '.join(names)} (`planner --help` says what each does)"

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except PlannerError as e:
            click.echo(f"error: {error_text(e, ctx)}", err=True)
            sys.exit(e.exit_code)
        except OSError as e:
            # A closed pipe (``| head``) is click's to handle: its ``main`` points stdout at a
            # wrapper that ignores the failed flush and exits 1, quietly (no traceback, no
            # "Exception ignored"); 1, not 141, since Python ignores SIGPIPE and no signal ended
            # the process.  Any other failure to write the document to stdout (a full disk,
            # ``> /dev/full``) is the user's to fix.
            if e.errno == errno.EPIPE or not _writing_stdout(e):
                raise
            _silence_stdout()
            click.echo(
                f"error: cannot write the output: {e.strerror or e}",
                err=True,
            )
            click.echo("  hint: free some space, or send the output elsewhere", err=True)
            sys.exit(1)


def _writing_stdout(e: BaseException) -> bool:
    """Whether ``e`` was raised by click.echo writing to stdout (the last frame of its
    traceback is click's ``echo``)."""
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return False
    frame = tb.tb_frame
    return frame.f_code.co_name == "echo" and frame.f_globals.get("__name__") == "click.utils"


def _silence_stdout() -> None:
    """Point stdout's file descriptor at the null device, so the text still buffered there
    cannot fail again when the interpreter flushes it on exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real file descriptor (a test runner's buffer)
        pass


# Explicit registry (no string-based discovery): each loader imports one command module and adds
# its commands; the CLI calls it when one of those commands is used (or listed in --help).
def _offers(group: click.Group) -> None:
    from planner.cli import offers

    offers.register(group)


def _prices(group: click.Group) -> None:
    from planner.cli import prices

    prices.register(group)


def _quote(group: click.Group) -> None:
    from planner.cli import quote

    quote.register(group)


def _tco(group: click.Group) -> None:
    from planner.cli import tco

    tco.register(group)


def _build(group: click.Group) -> None:
    from planner.cli import build

    build.register(group)


def _report(group: click.Group) -> None:
    from planner.cli import report

    report.register(group)


def _calibrate(group: click.Group) -> None:
    from planner.cli import calibrate

    calibrate.register(group)


def _workloads(group: click.Group) -> None:
    from planner.cli import workloads

    workloads.register(group)


_COMMANDS: dict[str, Callable[[click.Group], None]] = {
    "offers": _offers,
    "gpus": _offers,
    "prices": _prices,
    "quote": _quote,
    "tco": _tco,
    "budget": _tco,
    "build": _build,
    "report": _report,
    "workloads": _workloads,
    "estimate": _workloads,
    "models": _workloads,
    "calibrate": _calibrate,
}


@click.group(cls=PlannerGroup, lazy_commands=_COMMANDS)
@click.version_option(__version__, prog_name="planner")
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
def main(verbose: int) -> None:
    """Plan GPU jobs: requirements, offers, cheapest plans under a deadline, cloud vs own hardware.

    Example: planner quote --workload gpt2-xl-finetune --deadline 24h
    """
    from planner.cli.logs import configure_logging  # cloud SDKs' request logs stay out

    configure_logging(verbose)


# Whether :func:`run` paused the cyclic garbage collector for the start-up (only ``run`` sets it).
_startup = {"collector_paused": False}

# What the ``planner`` program sets in its own environment where the user has not set it: before
# the command imports NumPy and pydantic, so only in :func:`run` (a library caller keeps its
# process's own settings).
# - OPENBLAS_NUM_THREADS=1: NumPy's OpenBLAS starts a thread per core when it loads and the extra
#   ones spin, waiting for work that never comes (no command multiplies matrices: pandas, the
#   estimator and HiGHS do their own arithmetic); on a 2-core machine they took ~110 ms of CPU
#   from every command and, beside other work, ~60 ms of a quote's wall-clock time.
# - PYDANTIC_DISABLE_PLUGINS=__all__: building its first validator, pydantic looks for plugins
#   (observability hooks) in the entry points of every installed distribution; the validators
#   here check planner's own files, and reading a 230-package environment's metadata took ~9 ms
#   of every command's wall-clock (~4 ms of CPU).
PROGRAM_ENVIRONMENT = {"OPENBLAS_NUM_THREADS": "1", "PYDANTIC_DISABLE_PLUGINS": "__all__"}

# The values of PYDANTIC_DISABLE_PLUGINS under which pydantic's ``get_plugins`` answers no plugins
# at all (pydantic/plugin/_loader.py); other values name the plugins to leave out.
_NO_PYDANTIC_PLUGINS = ("__all__", "1", "true")
_PYDANTIC_PLUGIN_LOADER = "pydantic.plugin._loader"


def _skip_plugin_loader() -> None:
    """Where pydantic's plugins are all disabled, stand in for its plugin loader module with one
    whose ``get_plugins`` answers what pydantic's own would (no plugins).

    pydantic imports its loader when it builds its first validator, and the loader imports
    ``importlib.metadata`` (and with it ``email``, ``socket``, ``zipfile``'s path helpers) at its
    top, only to read entry points the disabled discovery never reads: ~6.5 ms of every command's
    wall-clock on a 2-core machine.  Nothing where the loader is already imported or plugins may
    run."""
    if os.environ.get("PYDANTIC_DISABLE_PLUGINS") not in _NO_PYDANTIC_PLUGINS:
        return
    if _PYDANTIC_PLUGIN_LOADER in sys.modules:
        return
    loader = types.ModuleType(_PYDANTIC_PLUGIN_LOADER)
    loader.get_plugins = lambda: ()  # type: ignore[attr-defined]
    # anything else a pydantic release asks of its loader: the stand-in gives way to the real one
    loader.__dict__["__getattr__"] = _real_plugin_loader
    sys.modules[_PYDANTIC_PLUGIN_LOADER] = loader


def _real_plugin_loader(name: str) -> Any:
    """An attribute of pydantic's real plugin loader, imported in the stand-in's place: a release
    that reads more of its loader than ``get_plugins`` pays the import and works as before."""
    if name.startswith("__"):  # the import system's own probes (``__path__``): a plain module
        raise AttributeError(name)
    import importlib

    sys.modules.pop(_PYDANTIC_PLUGIN_LOADER, None)
    return getattr(importlib.import_module(_PYDANTIC_PLUGIN_LOADER), name)


# Allocations (less deallocations) between two youngest-generation collections while a command
# runs; Python's default is 700.  A quote allocates a few hundred thousand short-lived objects
# (estimates, DataFrames, the MILP's rows) that reference counting frees, and at 700 it paid
# about 33 youngest and 3 middle collections for them, ~4 ms of a 0.45 s command (a 20-trial
# sweep or a 36-month budget about 48); at 30,000 none of them collects at all (at 10,000: one
# to three, ~1-3 ms).  The garbage a collection would find (pandas' reference cycles) waits at
# most 30,000 objects longer: a few MiB at worst, and none of those commands' peak memory moved.
COMMAND_GC_THRESHOLD = 30_000


def _end_startup() -> None:
    """Once the command is loaded: the collector back on, less often (:data:`COMMAND_GC_THRESHOLD`),
    the start-up's objects out of its way (:func:`run`); nothing where ``run`` did not pause it
    (tests, library callers of ``main``)."""
    if _startup["collector_paused"]:
        _startup["collector_paused"] = False
        gc.freeze()
        gc.set_threshold(COMMAND_GC_THRESHOLD, *gc.get_threshold()[1:])
        gc.enable()


def run() -> None:
    """The ``planner`` program (console script and ``python -m planner``): :func:`main` with the
    cyclic garbage collector kept off the objects that live as long as the process.

    Python collects cycles every few hundred allocations and, now and then, walks every object
    it tracks; the start-up (pandas, pydantic's schemas, the planner's modules) makes tens of
    thousands that all live to the end, so those walks are wasted: about 30 ms of a quote's CPU
    before its command runs, and about 70 ms while the interpreter tears the modules down.  So
    the collector is paused while the command loads, its objects are then frozen
    (:func:`gc.freeze`: out of every later collection) and collection resumes for the command's
    own work, every :data:`COMMAND_GC_THRESHOLD` allocations rather than every 700; when the
    command returns, what is left is frozen too.  Frozen objects are still
    freed by reference counting, and exit handlers (logging, ``weakref.finalize``) still run.
    Only here, not in :func:`main`: a test or a library that calls ``main`` collects as usual.

    Also here: one BLAS thread and no pydantic plugin discovery (:data:`PROGRAM_ENVIRONMENT`),
    unless the user says otherwise, nor the import of pydantic's plugin loader where discovery is
    off (:func:`_skip_plugin_loader`).
    """
    for name, value in PROGRAM_ENVIRONMENT.items():
        os.environ.setdefault(name, value)  # before the command imports NumPy and pydantic
    _skip_plugin_loader()
    gc.disable()
    _startup["collector_paused"] = True
    try:
        main()
    finally:
        _end_startup()  # a command that failed to load, or ``--help``
        gc.freeze()
