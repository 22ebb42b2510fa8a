"""Service quotes (issue 19): fleets that carry a load within latency targets, priced per month."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from planner import api
from planner.cli import main
from planner.errors import ConfigError, InfeasibleError
from planner.gpu_specs import load_gpu_catalog, resolve_gpu
from planner.optimize.fleet import (
    DAYS_PER_MONTH,
    UNTARGETED_UTILISATION,
    LoadCurve,
    replica_limit,
    size_fleets,
)
from planner.schema import Fabric, Interconnect
from planner.units import HOURS_PER_MONTH
from planner.workload import WorkloadSpec, load_workload, parse_workload
from planner.workload.estimate_types import Topology, topology_links
from planner.workload.inference import make_replica, service_lengths
from planner.workload.serving import serve
from planner.workload.spec import ServingSlo
from tests.conftest import offer_row

SLO = ServingSlo(ttft_ms_p95=1000, tpot_ms_p95=60)


def _offers(**row: object) -> pd.DataFrame:
    base = {
        "provider": "aws",
        "region": "us-east-1",
        "instance_type": "p4de.24xlarge",
        "gpu_model": "A100-80GB",
        "gpu_count": 8,
        "interconnect": "nvswitch",
        "price_on_demand_usd_per_hour": 27.44705,
        "price_reserved_1y_usd_per_hour": 17.0,
        "price_reserved_3y_usd_per_hour": 11.0,
    }
    return pd.DataFrame([offer_row(**{**base, **row})])


def _limit(spec_name: str, tp: int, slo: ServingSlo) -> float:
    spec = load_workload(spec_name)
    gpu = resolve_gpu("A100-80GB")
    topo = Topology(8, Interconnect.NVSWITCH, Fabric.ETHERNET)
    r = make_replica(spec, gpu, tp, topology_links(gpu, topo, tp))
    prompt, output = service_lengths(spec)
    return replica_limit(r, prompt, output, slo)[0]


def test_a_replicas_limit_is_the_highest_load_within_the_targets() -> None:
    spec = load_workload("llm-serving-70b")
    gpu = resolve_gpu("A100-80GB")
    topo = Topology(8, Interconnect.NVSWITCH, Fabric.ETHERNET)
    r = make_replica(spec, gpu, 4, topology_links(gpu, topo, 4))
    prompt, output = service_lengths(spec)
    limit, at, alone = replica_limit(r, prompt, output, SLO)
    assert limit > 0 and at is not None
    assert at.tpot_ms_p95 <= 60 and at.ttft_ms_p95 <= 1000
    over = serve(r, prompt, output, limit * 1.02)
    assert over.tpot_ms_p95 > 60 or over.ttft_ms_p95 > 1000 or over.overloaded
    assert alone.tpot_ms_p95 < at.tpot_ms_p95


def test_fleet_size_and_monthly_cost_follow_from_the_replica_limit() -> None:
    spec = load_workload("llm-serving-70b")
    offers = _offers()
    result = size_fleets(offers, spec, LoadCurve(5.0), SLO, load_gpu_catalog(), commitments=True)
    (plan,) = result.plans
    limit = _limit("llm-serving-70b", plan.tensor_parallel, SLO)
    replicas = math.ceil(5.0 / limit)
    per_instance = 8 // plan.tensor_parallel
    assert plan.replicas_peak == replicas
    assert plan.instances_base == math.ceil(replicas / per_instance)
    # the 3-year reservation is the cheapest way to pay for a fleet that runs all month
    assert plan.purchase_base == "reserved-3y"
    assert plan.cost_usd_per_month == pytest.approx(plan.instances_base * 11.0 * HOURS_PER_MONTH)
    tokens = 5.0 * 3600 * 24 * DAYS_PER_MONTH * 256
    assert plan.cost_usd_per_million_tokens == pytest.approx(plan.cost_usd_per_month / tokens * 1e6)


def test_a_daily_peak_runs_extra_instances_on_demand_in_peak_hours_only() -> None:
    spec = load_workload("llm-serving-7b")
    offers = _offers(
        instance_type="a2-ultragpu-1g",
        provider="gcp",
        region="us-central1",
        gpu_count=1,
        interconnect="none",
        price_on_demand_usd_per_hour=5.0,
        price_reserved_1y_usd_per_hour=3.0,
        price_reserved_3y_usd_per_hour=2.0,
    )
    slo = ServingSlo(ttft_ms_p95=2000)
    load = LoadCurve(5.0, peak_requests_per_s=40.0, peak_hours_per_day=8)
    (plan,) = size_fleets(offers, spec, load, slo, load_gpu_catalog(), commitments=True).plans
    limit = _limit_one(spec, slo)
    assert plan.instances_base == math.ceil(5.0 / limit)
    assert plan.instances_base + plan.instances_peak == math.ceil(40.0 / limit)
    assert plan.instances_peak > 0
    expected = (
        plan.instances_base * 2.0 * HOURS_PER_MONTH + plan.instances_peak * 5.0 * 8 * DAYS_PER_MONTH
    )
    assert plan.cost_usd_per_month == pytest.approx(expected)


def _limit_one(spec: WorkloadSpec, slo: ServingSlo) -> float:
    gpu = resolve_gpu("A100-80GB")
    topo = Topology(1, Interconnect.NONE, Fabric.ETHERNET)
    r = make_replica(spec, gpu, 1, topology_links(gpu, topo, 1))
    prompt, output = service_lengths(spec)
    return replica_limit(r, prompt, output, slo)[0]


def test_without_targets_a_replica_keeps_headroom() -> None:
    spec = load_workload("llm-serving-7b")
    gpu = resolve_gpu("A100-80GB")
    r = make_replica(
        spec, gpu, 1, topology_links(gpu, Topology(1, Interconnect.NONE, Fabric.ETHERNET), 1)
    )
    prompt, output = service_lengths(spec)
    cap = serve(r, prompt, output).capacity_requests_per_s
    assert replica_limit(r, prompt, output, ServingSlo())[0] == pytest.approx(
        cap * UNTARGETED_UTILISATION
    )


def test_every_quoted_fleet_meets_its_targets_when_estimated_again() -> None:
    result = api.quote_service(
        workload="llm-serving-70b", requests_per_s=5, ttft_ms_p95=1000, tpot_ms_p95=60
    )
    assert result.plans and result.plans[0].label == "cheapest"
    costs = [p.cost_usd_per_month for p in result.plans]
    assert costs == sorted(costs)
    base = load_workload("llm-serving-70b")
    for plan in result.plans:
        assert plan.purchase_base != "spot"
        spec = base.model_copy(
            update={
                "inference": base.inference.model_copy(
                    update={
                        "requests_per_s": 5.0
                        * plan.tensor_parallel
                        / (plan.replicas_peak * plan.tensor_parallel),
                        "tokens_per_s": None,
                    }
                )
            }
        )
        est = api.estimate(spec, plan.gpu_model, plan.tensor_parallel)
        assert est.serving is not None
        assert est.serving.ttft_ms.p95 <= 1000 * 1.001 and est.serving.tpot_ms.p95 <= 60 * 1.001


def test_cli_prints_replicas_monthly_cost_and_cost_per_million_tokens() -> None:
    out = CliRunner().invoke(
        main,
        [
            "quote",
            "--workload",
            "llm-serving-70b",
            "--rps",
            "5",
            "--p95-ttft",
            "1s",
            "--p95-tpot",
            "60ms",
            "--format",
            "json",
        ],
    )
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["kind"] == "service" and doc["slo"] == {"ttft_ms_p95": 1000.0, "tpot_ms_p95": 60.0}
    plan = doc["plans"][0]
    assert plan["cost_usd_per_month"] > 0 and plan["cost_usd_per_million_tokens"] > 0
    assert plan["replicas_peak"] >= 1 and plan["tpot_ms_p95"] <= 60.0
    text = CliRunner().invoke(
        main, ["quote", "--workload", "llm-serving-70b", "--rps", "5", "--p95-tpot", "60ms"]
    )
    assert "$/month" in text.stdout and "$/M tokens" in text.stdout and "TP" in text.stdout


def test_an_impossible_target_exits_3_naming_the_best_reachable() -> None:
    out = CliRunner().invoke(main, ["quote", "--workload", "llm-serving-70b", "--p95-tpot", "1ms"])
    assert out.exit_code == 3
    assert (
        "no fleet meets the latency targets: p95 TPOT 1 ms: the fastest reachable is" in out.stderr
    )
    with pytest.raises(InfeasibleError, match="fastest reachable"):
        api.quote_service(workload="llm-serving-7b", tpot_ms_p95=0.5)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--workload", "llm-serving-70b", "--deadline", "730h"], "leave out --deadline"),
        (["--workload", "gpt2-xl-finetune"], "Missing option '--deadline'"),
        (
            ["--workload", "gpt2-xl-finetune", "--rps", "3"],
            "a service quote serves an inference workload",
        ),
        (["--workload", "llm-serving-7b", "--p95-ttft", "fast"], "cannot read latency 'fast'"),
        (
            ["--workload", "llm-serving-7b", "--rps", "10", "--peak-rps", "5", "--peak-hours", "8"],
            "below the base load",
        ),
        (["--workload", "llm-serving-7b", "--peak-rps", "50"], "needs the hours it lasts"),
    ],
)
def test_bad_service_requests_are_clear_errors(args: list[str], says: str) -> None:
    out = CliRunner().invoke(main, ["quote", *args])
    assert out.exit_code == 2, out.output
    assert says in out.output
    assert "Traceback" not in out.output


def test_the_library_refuses_a_misspelt_keyword_and_a_bad_value() -> None:
    with pytest.raises(ConfigError, match="did you mean requests_per_s"):
        api.quote_service(workload="llm-serving-7b", request_per_s=5)
    with pytest.raises(ConfigError, match="ttft_ms_p95"):
        api.quote_service(workload="llm-serving-7b", ttft_ms_p95=float("nan"))


def test_a_workload_file_sets_the_load_and_targets(tmp_path: Path) -> None:
    path = tmp_path / "chat.yaml"
    path.write_text(
        "name: chat\nkind: inference\nmodel: llama-2-7b\ninference:\n  requests_per_s: 2\n"
        "  hours: 730\n  slo: {ttft_ms_p95: 800, tpot_ms_p95: 50}\n"
    )
    spec = parse_workload(
        {
            "name": "chat",
            "kind": "inference",
            "model": "llama-2-7b",
            "inference": {
                "requests_per_s": 2,
                "hours": 730,
                "slo": {"ttft_ms_p95": 800, "tpot_ms_p95": 50},
            },
        }
    )
    result = api.quote_service(workload=str(path))
    assert result.load.base_requests_per_s == 2 and result.slo == spec.inference.slo
    assert all(p.tpot_ms_p95 <= 50 and p.ttft_ms_p95 <= 800 for p in result.plans)


# -- image services: vision and diffusion workloads quoted per month and per 1,000 images ---------


def test_an_image_service_quotes_plans_per_month_and_per_thousand_images() -> None:
    # a request is one image; --p95-e2e is the p95 latency per image
    out = CliRunner().invoke(
        main,
        [
            "quote",
            "--workload",
            "stable-diffusion-generation",
            "--rps",
            "2",
            "--p95-e2e",
            "20s",
            "--format",
            "json",
        ],
    )
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["kind"] == "service" and doc["unit"] == "images"
    assert doc["slo"] == {"e2e_ms_p95": 20_000.0}
    assert doc["load"]["images_per_s"] == 2.0
    assert doc["load"]["images_per_month"] == pytest.approx(2.0 * HOURS_PER_MONTH * 3600)
    plan = doc["plans"][0]
    assert plan["unit"] == "images" and plan["tensor_parallel"] == 1
    assert "cost_usd_per_million_tokens" not in plan and "ttft_ms_p95" not in plan
    assert plan["cost_usd_per_thousand_images"] == pytest.approx(
        plan["cost_usd_per_month"] / doc["load"]["images_per_month"] * 1e3
    )
    assert plan["e2e_ms_p95"] <= 20_000.0 and plan["capacity_images_per_s"] >= 2.0
    text = CliRunner().invoke(
        main, ["quote", "--workload", "yolov5s-inference", "--p95-e2e", "50ms"]
    )
    assert text.exit_code == 0, text.output
    assert "$/1k images" in text.stdout and "30 images/s" in text.stdout


def test_every_quoted_image_fleet_meets_its_latency_per_image_when_estimated_again() -> None:
    result = api.quote_service(workload="yolov5s-inference", requests_per_s=300, e2e_ms_p95=20)
    assert result.plans and result.unit == "images"
    base = load_workload("yolov5s-inference")
    assert base.inference is not None
    for plan in result.plans:
        # the fleet's replicas share the load evenly: estimate one GPU's share again
        per_replica = 300.0 / plan.replicas_peak
        spec = base.model_copy(
            update={"inference": base.inference.model_copy(update={"images_per_s": per_replica})}
        )
        est = api.estimate(spec, plan.gpu_model, 1)
        assert est.serving is not None
        assert est.serving.e2e_ms.p95 <= 20 * 1.001


def test_an_image_fleet_holds_one_replica_per_gpu() -> None:
    spec = load_workload("yolov5s-inference")
    offers = _offers(
        gpu_model="T4", gpu_count=4, instance_type="g4dn.12xlarge", interconnect="pcie"
    )
    load = LoadCurve(30.0)
    fleets = size_fleets(offers, spec, load, ServingSlo(e2e_ms_p95=50), load_gpu_catalog())
    plan = fleets.plans[0]
    assert plan.tensor_parallel == 1 and plan.instances_base == 1 and plan.unit == "images"
    assert plan.cost_usd_per_month == pytest.approx(27.44705 * HOURS_PER_MONTH)


def test_token_targets_on_an_image_service_are_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="serves images"):
        api.quote_service(workload="yolov5s-inference", ttft_ms_p95=100)


def test_an_impossible_latency_per_image_exits_3() -> None:
    out = CliRunner().invoke(
        main, ["quote", "--workload", "stable-diffusion-generation", "--p95-e2e", "10ms"]
    )
    assert out.exit_code == 3
    assert "p95 end-to-end 10 ms: the fastest reachable is" in out.stderr


def test_owned_machines_serve_at_their_cost_per_machine_hour() -> None:
    from planner.ownership.costs import machine_cost_usd_per_hour
    from planner.ownership.hardware import load_hardware

    hw = load_hardware("4xa100-80gb-nvlink")
    result = api.quote_service(
        workload="llm-serving-7b", hardware=("4xa100-80gb-nvlink",), providers=("owned",)
    )
    (plan,) = result.plans
    assert (plan.provider, plan.instance_type, plan.purchase_base) == (
        "owned",
        hw.name,
        "owned-amortised",
    )
    hourly = machine_cost_usd_per_hour(hw, "amortised")
    assert plan.cost_usd_per_month == pytest.approx(plan.instances_base * hourly * HOURS_PER_MONTH)
    sunk = api.quote_service(
        workload="llm-serving-7b",
        hardware=("4xa100-80gb-nvlink",),
        providers=("owned",),
        local_cost_basis="sunk",
    ).plans[0]
    assert sunk.cost_usd_per_month < plan.cost_usd_per_month


def test_a_fleet_needing_more_machines_than_owned_is_left_out_and_said() -> None:
    out = CliRunner().invoke(
        main, ["quote", "--workload", "llm-serving-7b", "--hardware", "workstation-rtx4090"]
    )
    assert out.exit_code == 0, out.output
    assert "workstation-rtx4090: needs" in out.stdout and "you have 1" in out.stdout
    alone = CliRunner().invoke(
        main,
        [
            "quote",
            "--workload",
            "llm-serving-7b",
            "--hardware",
            "workstation-rtx4090",
            "--owned-only",
        ],
    )
    assert alone.exit_code == 3  # one RTX 4090 cannot carry 19.5 requests/s
    assert "no fleet carries the load on the machines there are" in alone.stderr
    assert "Traceback" not in alone.output


def test_a_session_prices_services_from_its_own_prices_only(tmp_path: Path) -> None:
    # as for job quotes: a request naming other prices is refused, not quietly repriced
    session = api.Planner()
    other = tmp_path / "other.csv"
    pd.DataFrame([offer_row()]).to_csv(other, index=False)
    with pytest.raises(ConfigError, match="are not this session's"):
        session.quote_service(workload="llm-serving-7b", offers_files=(other,))
    assert session.quote_service(workload="llm-serving-7b", top=1).plans


def _tensorrt(name: str) -> WorkloadSpec:
    spec = load_workload(name)
    assert spec.inference is not None
    return spec.variant(inference=spec.inference.model_copy(update={"framework": "tensorrt-llm"}))


def test_a_cuda_only_stack_leaves_an_amd_offer_out_and_quotes_the_rest() -> None:
    # regression: one MI300X row (Azure ND MI300X v5) used to abort a TensorRT-LLM service quote
    spec = _tensorrt("llm-serving-70b")
    amd = offer_row(
        provider="azure",
        region="eastus",
        instance_type="Standard_ND96isr_MI300X_v5",
        gpu_model="MI300X",
        price_on_demand_usd_per_hour=48.0,
        price_reserved_1y_usd_per_hour=30.0,
        price_reserved_3y_usd_per_hour=20.0,
    )
    offers = pd.concat([_offers(), pd.DataFrame([amd])], ignore_index=True)
    result = size_fleets(offers, spec, LoadCurve(5.0), SLO, load_gpu_catalog())
    assert {p.instance_type for p in result.plans} == {"p4de.24xlarge"}
    assert result.excluded == ("MI300X: tensorrt-llm runs on NVIDIA GPUs only, not the MI300X",)


def test_a_cuda_only_stack_with_only_amd_offers_says_why_and_what_serves_there() -> None:
    spec = _tensorrt("llm-serving-70b")
    offers = pd.DataFrame([offer_row(gpu_model="MI300X", instance_type="mi300x.8x")])
    with pytest.raises(ConfigError, match="NVIDIA GPUs only") as err:
        size_fleets(offers, spec, LoadCurve(5.0), SLO, load_gpu_catalog())
    assert err.value.hint is not None and "vllm" in err.value.hint
