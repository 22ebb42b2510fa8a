"""Physics of large and long runs: collectives, pipeline schedules, fabrics, failures, and the
held-out published runs (``holdout`` in benchmarks/data/published_runs.yaml)."""

from __future__ import annotations

import statistics
from typing import Any, NamedTuple

import pytest

from benchmarks.accuracy import Row, load_runs, measure
from planner.gpu_specs import resolve_gpu
from planner.schema import Fabric, Interconnect
from planner.workload import Topology, estimate, load_workload, parse_workload
from planner.workload import efficiency as eff
from planner.workload.estimate_types import PAUSES_PHASE
from planner.workload.parallel import Links, collective_seconds, pipeline_schedule
from planner.workload.training import train_facts

_, HOLDOUT = load_runs()

# Held-out runs were not used to set any constant: every one within 2x, so regressions show.
HOLDOUT_MAX_RATIO = 2.0
# Rows the physics does not explain (Row.known_gap) are still held within 3x.
KNOWN_GAP_MAX_RATIO = 3.0
# The largest pipelined runs (Falcon 180B, Llama 3 405B) within 1.4x: 1.55-1.76x before the
# matmul-shape and communication-overlap terms, 1.42-1.45x with them, 1.30-1.45x once Llama 3's
# activations drop the dropout masks it never stored (Meta's no-recompute layout then fits),
# 1.26-1.34x with the stages balanced around the head and the interleaved sends overlapped.
LARGE_SCALE_ROWS = ("H9", "H12", "H13", "H14")
LARGE_SCALE_MAX_RATIO = 1.4

GB = 1e9
LINKS = Links(
    gpus_per_node=8, intra_bytes_per_s=200 * GB, intra_kind="nvlink", node_bytes_per_s=100 * GB
)


# -- collectives -------------------------------------------------------------------------------------


def test_ring_all_reduce_inside_one_node() -> None:
    # 8 ranks, 10 GB of gradients: each rank sends 2 x (8-1)/8 x 10 GB = 17.5 GB at 200 GB/s
    assert collective_seconds(2.0, 10 * GB, 8, 8, LINKS) == pytest.approx(17.5 / 200)


def test_hierarchical_all_reduce_across_nodes() -> None:
    # 4 nodes x 8 ranks: 17.5 GB inside the node, then each node's NICs carry its 8 ranks' 1/8
    # shards: 8 x 2 x (10/8) GB x 3/4 = 15 GB at 100 GB/s
    assert collective_seconds(2.0, 10 * GB, 32, 8, LINKS) == pytest.approx(17.5 / 200 + 15 / 100)


def test_no_collective_without_data_parallel() -> None:
    assert collective_seconds(2.0, 10 * GB, 1, 1, LINKS) == 0.0


# -- pipeline schedule -------------------------------------------------------------------------------


def test_plain_1f1b_bubble() -> None:
    # 8 stages, 16 micro-batches of 1 s plus 0.1 s of sends: (16 + 7) x 1.1 s; interleaving is
    # ruled out by memory (no headroom)
    v, seconds, extra = pipeline_schedule(8, 16, 64, 1.0, 0.1, 10 * GB, 0.0)
    assert (v, extra) == (1, 0.0)
    assert seconds == pytest.approx(23 * 1.1)


def test_interleaving_cuts_the_bubble_and_costs_memory() -> None:
    # free sends: v = 8 chunks, bubble 7/8 of a slot; activations grow by (pp-1)/(pp·v) = 7/64
    v, seconds, extra = pipeline_schedule(8, 16, 64, 1.0, 0.0, 10 * GB, 100 * GB)
    assert v == 8
    assert seconds == pytest.approx(16 + 7 / 8)
    assert extra == pytest.approx(10 * GB * 7 / 64)


def test_interleaved_sends_hide_behind_the_chunks_but_not_the_fill() -> None:
    # sends of 0.02 s per chunk per micro-batch, shorter than any chunk (1/8 s): the 16 steady
    # slots take 1 s each, the bubble pays them: v=1 -> 23 x 1.02 = 23.46; v=8 -> 16 + 0.875 x 1.16
    # = 17.015 (tests/test_pipeline_stages.py has sends that outlast a chunk)
    v, seconds, _ = pipeline_schedule(8, 16, 64, 1.0, 0.02, 1 * GB, 100 * GB)
    assert v == 8 and seconds == pytest.approx(17.015)


def test_interleaving_needs_as_many_micro_batches_as_stages_and_a_layer_per_chunk() -> None:
    assert pipeline_schedule(8, 4, 64, 1.0, 0.0, GB, 100 * GB)[0] == 1
    assert pipeline_schedule(8, 16, 8, 1.0, 0.0, GB, 100 * GB)[0] == 1  # 1 layer per stage


def _decoder(vocab: int) -> dict[str, object]:
    return {
        "name": "v",
        "kind": "pretrain",
        "model": {
            "params": 20e9,
            "layers": 48,
            "hidden": 6144,
            "heads": 48,
            "vocab": vocab,
            "seq_len": 2048,
        },
        "data": {"tokens": 2048 * 512},
        "training": {
            "global_batch_tokens": 2048 * 512,
            "parallelism": {"tensor": 8, "pipeline": 4},
        },
    }


def test_lm_head_flops_are_6_v_h_per_token() -> None:
    f = train_facts(parse_workload(_decoder(250880)))
    assert f.head_flops_per_seq == pytest.approx(2048 * 6 * 250880 * 6144)


def test_a_big_vocabulary_slows_the_last_pipeline_stage() -> None:
    # same parameter count and FLOPs, but the 250k vocabulary's head sits on the last stage
    a100 = resolve_gpu("A100-80GB")
    small = estimate(parse_workload(_decoder(32000)), a100, 32)
    big = estimate(parse_workload(_decoder(250880)), a100, 32)
    assert small.total_flops == big.total_flops
    assert big.wall_hours > 1.05 * small.wall_hours


# -- monotonic properties ----------------------------------------------------------------------------


@pytest.mark.parametrize("gbps", [25.0, 100.0])
def test_more_nodes_over_a_slow_fabric_never_cost_fewer_gpu_hours(gbps: float) -> None:
    spec = load_workload("llama-2-7b-pretrain")
    h100 = resolve_gpu("H100")
    topo = Topology(8, Interconnect.NVSWITCH, Fabric.ETHERNET, gbps)
    hours = [estimate(spec, h100, n, topology=topo).gpu_hours for n in (8, 16, 32, 64, 128, 256)]
    assert hours == sorted(hours)
    assert hours[-1] > 1.5 * hours[0]  # a real penalty, not rounding


def test_a_faster_fabric_is_never_slower() -> None:
    spec = load_workload("llama-2-70b-pretrain")
    h100 = resolve_gpu("H100")
    hours = [
        estimate(
            spec, h100, 256, topology=Topology(8, Interconnect.NVSWITCH, fabric, gbps)
        ).wall_hours
        for fabric, gbps in (
            (Fabric.ETHERNET, 25.0),
            (Fabric.ETHERNET, 100.0),
            (Fabric.INFINIBAND, 3200.0),
        )
    ]
    assert hours[0] >= hours[1] >= hours[2]


def test_longer_jobs_lose_a_larger_share_to_failures() -> None:
    # 64 GPUs writing a 980 GB checkpoint from one node: delta = 0.136 h, MTBF = 793 h, so the
    # Young/Daly interval is ~14.7 h; shorter jobs write no checkpoint and lose (h/2 + restart)/MTBF
    ckpt = 70e9 * 14
    shares = [eff.failure_overhead(64, h, ckpt, 1) for h in (0.1, 1.0, 10.0, 100.0, 1000.0)]
    assert shares == sorted(shares)
    assert shares[0] < shares[1] < shares[2]
    mtbf = 1 / (eff.INTERRUPTIONS_PER_GPU_HOUR * 64)
    assert shares[1] == pytest.approx((0.5 + eff.RESTART_HOURS) / mtbf)


def test_run_time_losses_ramp_in_over_the_first_gpu_hours() -> None:
    # 0.17 x (1 - e^(-G / 48 GPU-h)): none at the start, 0.17 x (1 - 1/e) = 0.1075 at 48 GPU-hours,
    # all of it after a few GPU-weeks
    assert eff.run_time_losses(0.0) == 0.0
    assert eff.run_time_losses(48.0) == pytest.approx(0.17 * (1 - 1 / 2.718281828459045))
    assert eff.run_time_losses(0.5) == pytest.approx(0.17 * 0.5 / 48.0, rel=0.01)
    assert eff.run_time_losses(1e5) == pytest.approx(0.17)
    shares = [eff.run_time_losses(h) for h in (0.5, 2.0, 12.0, 48.0, 480.0)]
    assert shares == sorted(shares)


def test_a_whole_run_loses_at_least_its_floor_with_the_interruptions_counted_in_it() -> None:
    h100 = resolve_gpu("H100")
    long = parse_workload(
        {"name": "p", "kind": "pretrain", "model": "llama-2-7b", "data": {"tokens": 1e11}}
    )
    short = parse_workload(
        {"name": "p", "kind": "pretrain", "model": "llama-2-7b", "data": {"tokens": 2e7}}
    )
    for spec, count in ((long, 8), (short, 8), (long, 4096)):
        est = estimate(spec, h100, count)
        phases = est.time_breakdown_hours
        steps = phases["training steps"]
        lost = phases["checkpoints and interruptions"] + phases[PAUSES_PHASE]
        floor = steps * eff.run_time_losses(steps * count)
        # the pauses fill the interruptions up to the floor, never below zero
        assert lost == pytest.approx(max(floor, phases["checkpoints and interruptions"]))
        assert phases[PAUSES_PHASE] >= 0
        assert est.wall_hours == pytest.approx(sum(phases.values()))
        # the steps' share of the wall-clock leaves the pauses out
        assert est.goodput == pytest.approx(steps / est.wall_hours)
    # a long run on one node: its interruptions are ~nothing, the floor decides
    long8 = estimate(long, h100, 8).time_breakdown_hours
    assert long8[PAUSES_PHASE] / long8["training steps"] > 0.16
    # a 20M-token job of minutes carries almost none
    short8 = estimate(short, h100, 8).time_breakdown_hours
    assert short8[PAUSES_PHASE] / short8["training steps"] < 0.01


def _failure_goodput(est: Any) -> float:
    """The share of steps in steps + checkpoints + interruptions (start-up and evaluation aside)."""
    steps = est.time_breakdown_hours["training steps"]
    return float(steps / (steps + est.time_breakdown_hours["checkpoints and interruptions"]))


def test_goodput_falls_with_length_and_scale() -> None:
    h100 = resolve_gpu("H100")
    spec = parse_workload(
        {"name": "g", "kind": "pretrain", "model": "llama-2-70b", "data": {"tokens": 2e12}}
    )
    short = parse_workload(
        {"name": "g", "kind": "pretrain", "model": "llama-2-70b", "data": {"tokens": 1e8}}
    )
    small = _failure_goodput(estimate(spec, h100, 1024))
    huge = _failure_goodput(estimate(spec, h100, 16384))
    assert _failure_goodput(estimate(short, h100, 16384)) >= huge
    assert huge < small < 1.0
    # Llama 3 (16k H100s, 419 interruptions in 54 days): "higher than 90% effective training time"
    assert 0.85 < huge < 0.97


# -- held-out published runs -------------------------------------------------------------------------


@pytest.mark.parametrize("row", HOLDOUT, ids=[r.id for r in HOLDOUT])
def test_holdout_row_within_loose_bound(row: Row) -> None:
    value, est = measure(row)
    assert est.fits
    ratio = value / row.published
    bound = KNOWN_GAP_MAX_RATIO if row.known_gap else HOLDOUT_MAX_RATIO
    assert 1 / bound <= ratio <= bound, (
        f"{row.id}: estimate {value:.4g} vs published {row.published:.4g}"
    )


@pytest.mark.parametrize("rid", LARGE_SCALE_ROWS)
def test_largest_pipelined_runs_within_tighter_bound(rid: str) -> None:
    row = next(r for r in HOLDOUT if r.id == rid)
    ratio = measure(row)[0] / row.published
    assert 1 / LARGE_SCALE_MAX_RATIO <= ratio <= LARGE_SCALE_MAX_RATIO, f"{rid}: ratio {ratio:.2f}"


def test_holdout_median_error() -> None:
    errors = [abs(measure(r)[0] / r.published - 1) for r in HOLDOUT]
    assert statistics.median(errors) <= 0.30


def test_every_holdout_row_cites_a_source() -> None:
    assert len({r.id for r in HOLDOUT}) == len(HOLDOUT)
    for row in HOLDOUT:
        assert row.source and row.published > 0


# -- a global batch the data-parallel ranks cannot share evenly ---------------------------------


def test_a_step_does_the_global_batch_whatever_the_data_parallel_size() -> None:
    """SQuAD fine-tuning at batch 12 (the HF example) on 6 and on 8 GPUs of one node: either way
    the busiest rank holds 2 sequences, so a step takes the same time and advances the job by the
    same 12 sequences; 8 GPUs are not credited with a 16-sequence step nobody asked for."""
    spec = load_workload("bert-base-finetune").model_dump(mode="json", exclude_none=True)
    spec["training"]["parallelism"] = {"tensor": 1, "pipeline": 1, "zero": 0, "micro_batch": 2}
    # a stack that dispatches no eager host work per layer: the GPU's compute sets each step
    spec["training"]["framework"] = "megatron"
    pinned = parse_workload(spec)
    gpu = resolve_gpu("A100-80GB")
    topo = Topology(gpus_per_node=8, interconnect=Interconnect.NVSWITCH, fabric=Fabric.ETHERNET)
    six, eight = (_steps(estimate(pinned, gpu, n, topology=topo)) for n in (6, 8))
    assert six.micro_batch_size == eight.micro_batch_size == 2
    assert six.grad_accumulation == eight.grad_accumulation == 1
    # the same steps of the same compute; only the gradient all-reduce differs (7/8 against 5/6
    # of the ring's 2G bytes per rank).  Crediting 8 GPUs with 16 sequences a step made them 25%
    # faster than 6.
    assert six.hours <= eight.hours <= 1.05 * six.hours
    # 4 ranks share 12 evenly, 3 each (a micro-batch of 2 and a half-filled one): 1.5x the
    # compute of a step on 6 GPUs, the same gradient exchange and optimizer step, so between 1x
    # and 1.5x the time: above 1.2x while the compute is most of a step (on an A100 at 0.65 of its
    # peak, BERT-base's micro-batches of 2 leave the all-reduce and optimizer a third of it)
    four = _steps(estimate(pinned, gpu, 4, topology=topo))
    assert four.grad_accumulation == 2
    assert 1.2 * six.hours < four.hours < 1.5 * six.hours
    # the Hugging Face stack's micro-batches of 2 short sequences wait on the host's dispatch
    # (strategy.eager_host_seconds), which the half-filled second one pays whole: twice the time
    spec["training"]["framework"] = "hf-trainer"
    eager = parse_workload(spec)
    six_hf, four_hf = (_steps(estimate(eager, gpu, n, topology=topo)) for n in (6, 4))
    assert four_hf.hours == pytest.approx(2 * six_hf.hours, rel=0.05)


class _Steps(NamedTuple):
    hours: float  # the training steps' share of the wall-clock (start-up aside)
    micro_batch_size: int
    grad_accumulation: int


def _steps(est: Any) -> _Steps:
    s = est.strategy
    return _Steps(
        est.time_breakdown_hours["training steps"], s.micro_batch_size, s.grad_accumulation
    )
