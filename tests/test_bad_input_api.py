"""Issue 17, the library's arguments and the messages that say why nothing can run.

The product rule each test pins: a Python API argument of the wrong type is a ConfigError naming
the argument and what it takes (checked once, by ``planner.api._keywords_checked``, for every
function and the Planner session), a bare string where a list of names or paths is expected means
that one name or path, and "no configuration can run this workload" says what excluded the offers
instead of pointing at a list of exclusions that was never printed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import planner
from planner.cli import main
from planner.errors import ConfigError, InfeasibleError, PlannerError


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=env)


def assert_clean_error(result: Result, *needles: str, exit_code: int) -> None:
    """Non-zero exit, no traceback, every needle in the message (case-insensitive)."""
    text = result.output
    assert result.exit_code == exit_code, text
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"escaped {type(result.exception).__name__}: {result.exception}"
    )
    assert "Traceback" not in text
    for needle in needles:
        assert needle.lower() in text.lower(), f"{needle!r} not in:\n{text}"


def _tco_without_cloud() -> object:
    return planner.tco("8xh100-hgx", with_cloud=False)


# --- wrong argument types: a ConfigError naming the argument, with a hint ---------------------------


@pytest.mark.parametrize(
    ("call", "argument", "needle"),
    [
        # TypeError: 'int' object is not iterable
        (lambda: planner.OfferFilter(providers=123), "providers", "list of names"),
        (lambda: planner.OfferFilter(gpus=7.5), "gpus", "list of names"),
        # guard: the session refused it already; the check now lives in the one helper
        (lambda: planner.offers(snapshot_dir=123), "snapshot_dir", "path"),
        # a number for the private price lists reached the CSV loader
        (lambda: planner.offers(offers_files=123), "offers_files", "path"),
        (lambda: planner.Planner(offers_files=["a.csv", 3]), "offers_files", "3"),  # type: ignore[list-item]
        # TypeError: no report for NoneType
        (lambda: planner.report(None), "result", "planner.quote"),
        (lambda: planner.figures(3), "result", "planner.tco"),
        # TypeError: missing a required positional argument (Python's wording, no hint)
        (lambda: planner.report(), "result", "missing"),  # type: ignore[call-arg]
        # AttributeError: 'str' object has no attribute 'gpus_per_node'
        (
            lambda: planner.estimate("gpt2-xl-finetune", "H100", 1, topology="nvlink"),
            "topology",
            "Topology",
        ),
        # accepted: any truthy string sorted descending (and "no" too)
        (lambda: planner.offers(descending="yes"), "descending", "True or False"),
        (lambda: planner.tco("8xh100-hgx", with_cloud="no"), "with_cloud", "True or False"),
        (
            lambda: planner.tco("8xh100-hgx", any_interconnect=1, with_cloud=False),
            "any_interconnect",
            "True or False",
        ),
        (
            lambda: planner.budget("2027-ml-platform", sensitivity="no"),
            "sensitivity",
            "True or False",
        ),
        # checked before any network call
        (lambda: planner.refresh_prices(force="yes"), "force", "True or False"),
        # a number for a name list: iterating it raised TypeError
        (lambda: planner.tco("8xh100-hgx", providers=5), "providers", "list of names"),
        (lambda: planner.refresh_prices(regions=[1]), "regions", "names"),  # type: ignore[list-item]
        (lambda: planner.workload_requirements("gpt2-xl-finetune", gpus=5), "gpus", "names"),
        # AttributeError: 'int' object has no attribute 'solve'
        (
            lambda: planner.quote(workload="gpt2-xl-finetune", deadline_hours=24, solver=3),
            "solver",
            "Solver",
        ),
        # TypeError from pathlib
        (lambda: planner.prices_diff(3, "x"), "old", "path"),
    ],
)
def test_wrong_argument_type_is_a_config_error_naming_it(
    call: Callable[[], object], argument: str, needle: str
) -> None:
    with pytest.raises(ConfigError) as info:
        call()
    error = info.value
    assert error.key_path == argument, str(error)
    assert needle.lower() in str(error).lower()
    assert error.hint


def test_a_result_argument_still_takes_a_result() -> None:
    assert planner.report(_tco_without_cloud(), "markdown").startswith("#")


# --- a bare string for a sequence means that one name or path, once for every entry point ------------


def test_a_bare_provider_name_means_that_provider() -> None:
    # was: "unknown provider 'a'" (the string's letters)
    one = planner.tco("8xh100-hgx", providers="aws")
    assert one == planner.tco("8xh100-hgx", providers=("aws",))


def test_a_bare_offers_file_means_that_file(tmp_path: Path) -> None:
    # guard: the session split no name since an earlier fix; the rule now lives in the one helper
    missing = str(tmp_path / "prices.csv")
    with pytest.raises(PlannerError) as info:
        planner.offers(offers_files=missing)
    assert "prices.csv" in str(info.value)
    assert planner.Planner(offers_files=Path(missing)).offers_files == (Path(missing),)


def test_a_bare_gpu_name_for_requirements_means_that_gpu() -> None:
    # was: one estimate per letter of "H100" ("unknown GPU 'H'")
    found = planner.workload_requirements("gpt2-xl-finetune", gpus="H100")
    assert [e.gpu for e in found] == ["H100"]


# --- "no configuration can run this workload": say what excluded the offers ------------------------

NOTHING_RUNS = [
    # every AWS offer over its quota of 0 instances (was: "see the excluded offers above")
    (
        ("gpt2-xl-finetune", ("--quota", "aws=0", "--provider", "aws")),
        {"quotas": {"aws": 0}, "providers": ("aws",)},
        ("quota", "aws=0"),
    ),
    # lambda has no eu-west-3: the region filter left nothing
    (
        ("gpt2-xl-finetune", ("--provider", "lambda", "--region", "eu-west-3")),
        {"providers": ("lambda",), "regions": ("eu-west-3",)},
        ("region filter", "eu-west-3", "us-west"),
    ),
    # no cloud offers RTX4090: the GPU filter left nothing
    (
        ("llama-2-70b-finetune", ("--gpu", "RTX4090")),
        {"gpus": ("RTX4090",)},
        ("GPU filter", "RTX4090", "RTXA6000"),
    ),
    # T4s (in fp16: they have no bf16) too small and the one bigger gang over quota: both
    # reasons, with counts
    (
        (
            "llama-2-70b-finetune",
            ("--precision", "fp16", "--gpu", "T4", "--provider", "aws", "--quota", "aws=1"),
        ),
        {"gpus": ("T4",), "providers": ("aws",), "quotas": {"aws": 1}},
        # a T4 is sold as 16 GB; with its ECC on a job gets 15 GiB of it
        ("GPU memory", "15 GiB", "GiB needed", "quota", "offer(s)"),
    ),
    # the same T4s in the workload's bf16: they cannot train in it, and the fix says fp16
    (
        ("llama-2-70b-finetune", ("--gpu", "T4", "--provider", "aws")),
        {"gpus": ("T4",), "providers": ("aws",)},
        ("T4", "cannot train in bf16", "training.precision: fp16"),
    ),
]


def _workload(cli: tuple[str, tuple[str, ...]]) -> object:
    """The workload the command line names, with its --precision if it gives one."""
    args = cli[1]
    if "--precision" not in args:
        return cli[0]
    return planner.with_training(
        planner.load_workload(cli[0]), precision=args[args.index("--precision") + 1]
    )


def test_a_layout_no_gang_can_hold_is_not_called_a_memory_problem(tmp_path: Path) -> None:
    # pipeline 3 needs a multiple of 3 GPUs; gangs of 1-8 GPU instances x 1-64 never are
    model = {"arch": "decoder", "params": 1.3e9, "layers": 24, "hidden": 2560, "heads": 32}
    raw = {
        "name": "pinned",
        "kind": "finetune",
        "model": {**model, "seq_len": 2048},
        "data": {"tokens": 1.0e8},
        "training": {"parallelism": {"pipeline": 3}},
    }
    path = tmp_path / "pinned.yaml"
    path.write_text(json.dumps(raw), encoding="utf-8")  # JSON is YAML
    with pytest.raises(InfeasibleError) as info:
        planner.quote(workload=str(path), deadline_hours=24, gpus=("H100",))
    text = str(info.value)
    assert "parallel layout" in text and "training.parallelism" in text
    assert "GiB needed" not in text and "above" not in text


@pytest.mark.parametrize(("cli", "fields", "needles"), NOTHING_RUNS)
def test_nothing_runs_says_why_from_the_library(
    cli: tuple[str, tuple[str, ...]], fields: dict[str, object], needles: tuple[str, ...]
) -> None:
    with pytest.raises(InfeasibleError) as info:
        planner.quote(workload=_workload(cli), deadline_hours=24, **fields)
    text = str(info.value)
    assert "above" not in text
    assert info.value.hint
    for needle in needles:
        assert needle.lower() in text.lower(), f"{needle!r} not in:\n{text}"


@pytest.mark.parametrize(("cli", "fields", "needles"), NOTHING_RUNS)
def test_nothing_runs_says_why_on_the_command_line(
    cli: tuple[str, tuple[str, ...]], fields: dict[str, object], needles: tuple[str, ...]
) -> None:
    result = invoke("quote", "--workload", cli[0], "--deadline", "24h", *cli[1])
    assert_clean_error(result, *needles, "hint:", exit_code=3)
    assert "above" not in result.output


# --- environment variables are blamed by name ------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "value"),
    [
        # was: "Invalid value for '--max-age-days'", an option the user never typed
        (("offers", "--limit", "1"), "abc"),
        (("prices", "status"), "-3"),
    ],
)
def test_a_bad_max_age_variable_is_named(command: tuple[str, ...], value: str) -> None:
    result = invoke(*command, env={"PLANNER_MAX_PRICE_AGE_DAYS": value})
    assert_clean_error(result, "PLANNER_MAX_PRICE_AGE_DAYS", repr(value), "unset it", exit_code=2)
    assert "--max-age-days" not in result.output.split("Error:")[-1]


def test_workload_from_facts_takes_numpy_counts() -> None:
    """A numpy integer is a number of tokens (as everywhere else in the library)."""
    import numpy as np

    from planner.workload.adhoc import workload_from_facts

    assert workload_from_facts("llama-2-7b", tokens=np.int64(50_000_000)).data.tokens == 5e7


# An integer beyond a float's range (10**400) is refused by name: math.isfinite and the checks'
# float arithmetic raised OverflowError on it.
HUGE = 10**400
HUGE_INTS: list[tuple[Callable[[], object], str]] = [
    (lambda: planner.quote(workload="gpt2-finetune", deadline_hours=HUGE), "deadline_hours"),
    (
        lambda: planner.quote(workload="gpt2-finetune", deadline_hours=24, budget_usd=HUGE),
        "budget_usd",
    ),
    (
        lambda: planner.quote(workload="gpt2-finetune", deadline_hours=24, discounts={"aws": HUGE}),
        "discounts",
    ),
    (
        lambda: planner.quote_service(workload="llm-serving-7b", requests_per_s=HUGE),
        "requests_per_s",
    ),
    (lambda: planner.tco("8xh100-hgx", years=HUGE, with_cloud=False), "years"),
    (
        lambda: planner.budget("2027-ml-platform", time_limit_s=HUGE, sensitivity=False),
        "time_limit_s",
    ),
    (
        lambda: planner.offers(planner.OfferFilter(max_price_usd_per_hour=HUGE)),
        "max_price_usd_per_hour",
    ),
    (
        lambda: planner.prices_diff("reference-2026-11-25", "reference-2026-11-25", threshold=HUGE),
        "threshold",
    ),
    (
        lambda: planner.calibrate("gpt2-finetune", "H100", measured_step_seconds=HUGE),
        "measured_step_seconds",
    ),
    (lambda: planner.workload_from_facts("gpt2", tokens=HUGE), "data.tokens"),
]


@pytest.mark.parametrize(("call", "field"), HUGE_INTS, ids=[f for _, f in HUGE_INTS])
def test_an_integer_beyond_a_float_is_refused_by_name(
    call: Callable[[], object], field: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path))
    with pytest.raises(ConfigError) as caught:
        call()
    assert caught.value.key_path == field


def test_quote_with_positional_arguments_is_a_config_error() -> None:
    # was Python's TypeError: "quote() takes from 0 to 1 positional arguments but 2 were given"
    with pytest.raises(ConfigError, match="too many positional arguments"):
        planner.quote("gpt2-finetune", 24)
