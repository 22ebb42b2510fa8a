"""Every public function of the library answers a misspelt keyword with a PlannerError naming it
(a ConfigError or UnknownNameError, shown by the CLI and readable in a notebook), never Python's
TypeError (the bad-input rule holds for the Python API as for the CLI)."""

from __future__ import annotations

import inspect

import pytest

import planner
from planner.errors import ConfigError, PlannerError

FUNCTIONS = sorted(
    name
    for name in planner.__all__
    if inspect.isfunction(getattr(planner, name)) or inspect.ismethod(getattr(planner, name))
)


def test_the_public_functions_are_all_here() -> None:
    # a new public function is checked by the tests below as soon as it is exported
    assert {
        "estimate",
        "quote",
        "resolve_gpu",
        "load_offers",
        "calibrate",
        "list_workloads",
    } <= set(FUNCTIONS)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_a_misspelt_keyword_is_named_not_a_type_error(name: str) -> None:
    func = getattr(planner, name)
    # with_training takes the training fields as keywords: its workload comes first
    args = ("gpt2-finetune",) if name == "with_training" else ()
    with pytest.raises(PlannerError) as err:
        func(*args, zz_not_an_argument=1)
    assert "zz_not_an_argument" in str(err.value) or (
        isinstance(err.value, ConfigError) and err.value.key_path == "zz_not_an_argument"
    )


@pytest.mark.parametrize(
    "name",
    [
        n
        for n in FUNCTIONS
        if n
        in {
            "calibrate",
            "load_workload",
            "resolve_gpu",
            "default_topology",
            "remove_calibration",
            "prices_history",
            "with_training",
            "load_hardware",
        }
    ],
)
def test_a_missing_argument_is_named_not_a_type_error(name: str) -> None:
    with pytest.raises(ConfigError) as err:
        getattr(planner, name)()
    assert err.value.key_path is not None and "missing" in str(err.value)
