"""Process start-up: each command loads only what it uses, and every command still loads."""

from __future__ import annotations

import subprocess
import sys

import click
from click.testing import CliRunner

from planner.cli import main


def _modules_after(args: list[str]) -> set[str]:
    """The modules a fresh interpreter has imported after running ``planner <args>``."""
    code = (
        "import sys\n"
        "from planner.cli import main\n"
        f"try:\n    main({args!r})\n"
        "except SystemExit as e:\n    assert e.code == 0, e.code\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.splitlines()[-1].split())  # the last line, after the command's output


def test_offers_starts_without_the_optimizer_or_the_workload_model() -> None:
    loaded = _modules_after(["offers", "--gpu", "H100", "--limit", "1", "--format", "json"])
    assert "planner.cli.offers" in loaded  # the command ran
    for heavy in (
        "pulp",
        "matplotlib",  # charts are drawn for --report/report only
        "highspy",
        "planner.optimize.model",
        "planner.quoting.service",
        "planner.workload.spec",
    ):
        assert heavy not in loaded, heavy
    assert "planner.ownership.hardware" not in loaded and "planner.cli.tco" not in loaded


def test_quote_starts_without_tco_budget_or_owned_hardware_modules() -> None:
    loaded = _modules_after(["quote", "--workload", "gpt2-finetune", "--deadline", "24h"])
    assert {"highspy", "planner.quoting.service", "planner.cli.quote"} <= loaded
    # PuLP is the road to CBC only; the default HiGHS solve does not load it
    for unused in (
        "pulp",
        "matplotlib",  # charts are drawn for --report/report only
        "planner.ownership.hardware",
        "planner.ownership.costs",
        "planner.cli.tco",
        "planner.cli.report",
        "planner.catalog.refresh",  # a stale-price warning reads only the adapter registry
        # a training job's quote: no serving models, no service quote, no HTML document model
        "planner.workload.serving",
        "planner.workload.vision_serving",
        "planner.optimize.fleet",
        "planner.quoting.service_quote",
        "planner.reports.quote_doc",
        "planner.reports.charts",
    ):
        assert unused not in loaded, unused


def test_a_service_quote_loads_the_serving_models() -> None:
    loaded = _modules_after(
        ["quote", "--workload", "llm-serving-7b", "--rps", "1", "--format", "json"]
    )
    assert {"planner.workload.serving", "planner.optimize.fleet"} <= loaded


def test_estimate_starts_without_the_optimizer_or_the_chart_library() -> None:
    loaded = _modules_after(["estimate", "gpt2-finetune", "--gpu", "H100", "--format", "json"])
    assert "planner.cli.workloads" in loaded  # the command ran
    for unused in ("matplotlib", "pulp", "highspy"):
        assert unused not in loaded, unused


def test_every_listed_command_loads_under_its_own_name() -> None:
    ctx = click.Context(main)
    names = main.list_commands(ctx)
    assert names == sorted(names) and len(names) == len(set(names))
    for name in names:
        command = main.get_command(ctx, name)
        assert command is not None and command.name == name


def test_help_lists_every_command_and_unknown_commands_fail() -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["--help"])
    assert result.exit_code == 0
    for name in ("budget", "estimate", "gpus", "offers", "prices", "quote", "report", "tco"):
        assert f"  {name} " in result.output
    result = runner.invoke(main, ["quotes"])
    assert result.exit_code == 2 and "No such command 'quotes'" in result.output
