"""Matmul shapes and communication overlap: the efficiency terms that change with scale
(planner.workload.efficiency.matmul_fraction, exposed_tensor_parallel_seconds and
planner.workload.parallel.exposed_gradient_sync), checked against hand-computed values."""

from __future__ import annotations

import pytest

from planner.gpu_specs import resolve_gpu
from planner.workload import efficiency as eff
from planner.workload import estimate, parse_workload
from planner.workload.parallel import exposed_gradient_sync, pipeline_schedule

GB = 1e9


# -- bytes per FLOP of the matmuls --------------------------------------------------------------------


def test_reference_layer_bytes_per_flop_by_hand() -> None:
    # 8,192 tokens, h = 4,096, one GPU, 12·h² parameters: 1/8192 + 1/4096 + 4·4096/(12·4096²)
    # = (1 + 2 + 2/3) / 8192 = (11/3) / 8192, a third of it per matmul = 11 / 73,728
    x = eff.layer_bytes_per_flop(8192, 4096, 1, 12 * 4096**2)
    assert x == pytest.approx(11 / 73728)


def test_layer_formula_matches_the_four_matrices_one_by_one() -> None:
    # a GPT layer split over tp = 2: QKV h x 3h/2, output h/2 x h, up h x 2h, down 2h x h.  Each
    # matmul runs forward, input-gradient and weight-gradient (same FLOPs), writing M·N, M·K and
    # K·N results, so bytes per FLOP = (1/K + 1/N + 1/M) / 3, FLOP-weighted over the four.
    tokens, h, tp = 2048, 1024, 2
    shapes = [(h, 3 * h // tp), (h // tp, h), (h, 4 * h // tp), (4 * h // tp, h)]
    flops = [2 * tokens * k * n for k, n in shapes]
    bytes_ = [f * (1 / k + 1 / n + 1 / tokens) / 3 for f, (k, n) in zip(flops, shapes, strict=True)]
    assert eff.layer_bytes_per_flop(tokens, h, tp, 12 * h * h) == pytest.approx(
        sum(bytes_) / sum(flops)
    )


def test_head_bytes_per_flop_by_hand() -> None:
    # 2,048 tokens, h = 8,192, vocabulary 131,072 over 8 ranks: (64 + 16 + 8) / 131,072 / 3
    assert eff.head_bytes_per_flop(2048, 8192, 8, 131072) == pytest.approx(88 / 393216)


# -- matmul efficiency --------------------------------------------------------------------------------


def test_the_reference_shape_runs_at_the_calibrated_fraction() -> None:
    for name in ("A100-80GB", "H100", "V100-16GB"):
        gpu = resolve_gpu(name)
        assert eff.matmul_fraction(gpu, eff.reference_bytes_per_flop(gpu)) == pytest.approx(
            eff.gemm_fraction(gpu)
        )


def test_extra_result_bytes_cost_their_time_at_the_memory_bandwidth() -> None:
    # A100-80GB: 312 TFLOPS / 2,039 GB/s = 153.0 FLOP per byte; 0.001 more bytes per FLOP than the
    # reference adds 0.153 to the 1/0.65 seconds-per-peak-FLOP
    a100 = resolve_gpu("A100-80GB")
    x = eff.reference_bytes_per_flop(a100) + 1e-3
    assert eff.matmul_fraction(a100, x) == pytest.approx(1 / (1 / 0.65 + 312e12 / 2039e9 * 1e-3))


def test_bigger_matmuls_run_closer_to_peak_but_never_above_it() -> None:
    h100 = resolve_gpu("H100")
    fractions = [
        eff.matmul_fraction(h100, eff.layer_bytes_per_flop(8192, h, 8, 12 * h * h))
        for h in (2048, 4096, 8192, 16384)
    ]
    assert fractions == sorted(fractions)
    assert fractions[-1] > 1.05 * fractions[0]  # a real effect, not rounding
    assert eff.matmul_fraction(h100, 0.0) <= 1.0


def test_wide_tensor_parallel_splits_make_thinner_slower_matmuls() -> None:
    a100 = resolve_gpu("A100-80GB")
    h = 4096
    tp1, tp8 = (
        eff.matmul_fraction(a100, eff.layer_bytes_per_flop(4096, h, tp, 12 * h * h))
        for tp in (1, 8)
    )
    assert tp8 < tp1


def test_wider_decoders_of_the_same_depth_reach_a_higher_mfu() -> None:
    h100 = resolve_gpu("H100")

    def mfu(model: dict[str, object]) -> float:
        spec = parse_workload(
            {
                "name": "s",
                "kind": "pretrain",
                "model": model,
                "data": {"tokens": 1e9},
                "training": {"global_batch_tokens": 2**21, "parallelism": {"tensor": 1}},
            }
        )
        return estimate(spec, h100, 8).efficiency

    # the wider decoder's matmuls are fatter (and its element-wise traffic smaller per FLOP)
    shape = {"layers": 24, "vocab": 32000, "seq_len": 2048}
    narrow = {**shape, "params": 12 * 24 * 1024**2, "hidden": 1024, "heads": 16}
    wide = {**shape, "params": 12 * 24 * 4096**2, "hidden": 4096, "heads": 32}
    assert mfu(wide) > mfu(narrow)


# -- communication overlap ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("t_comm", "t_backward", "chunks", "pp", "expected"),
    [
        (3.0, 1.0, 1, 8, 2.0),  # one chunk: the last backward pass hides 1 s of 3
        (0.5, 1.0, 1, 8, 0.0),  # fully hidden
        # 4 chunks over 8 stages: chunk steps of 0.25 s, chunk reductions of 1 s; chunk 0 shows
        # 1 - 0.25, the queue behind chunk 3 shows 4 - (3·8 + 1)·0.25 < 0
        (4.0, 1.0, 4, 8, 0.75),
        # 12 s of reduction cannot fit the earlier chunks' windows: 12 - 25·0.25 = 5.75
        (12.0, 1.0, 4, 8, 5.75),
        (0.2, 1.0, 4, 8, 0.0),
    ],
)
def test_gradient_sync_exposes_one_chunk_under_interleaving(
    t_comm: float, t_backward: float, chunks: int, pp: int, expected: float
) -> None:
    assert exposed_gradient_sync(t_comm, t_backward, chunks, pp) == pytest.approx(expected)


def test_interleaving_never_exposes_more_gradient_sync_than_one_chunk_would() -> None:
    for t_comm in (0.5, 2.0, 8.0, 40.0):
        assert exposed_gradient_sync(t_comm, 1.0, 8, 16) <= exposed_gradient_sync(
            t_comm, 1.0, 1, 16
        )


def test_tensor_parallel_overlap_shows_one_ring_step_or_what_the_matmuls_cannot_cover() -> None:
    assert eff.exposed_tensor_parallel_seconds(0.8, 8, 10.0) == pytest.approx(0.1)
    assert eff.exposed_tensor_parallel_seconds(0.8, 8, 0.5) == pytest.approx(0.3)


def test_only_hopper_and_newer_overlap_tensor_parallel() -> None:
    assert eff.overlaps_tensor_parallel(resolve_gpu("H100"))
    assert not eff.overlaps_tensor_parallel(resolve_gpu("A100-80GB"))


def test_embedding_and_head_chunks_let_126_layers_run_as_16_stages_of_8_chunks() -> None:
    # Llama 3 405B: 126 layers + embedding + head = 128 chunks = 16 stages x 8 (free sends, room)
    v, seconds, _ = pipeline_schedule(16, 32, 126, 1.0, 0.0, 1 * GB, 100 * GB)
    assert v == 8
    assert seconds == pytest.approx(32 + 15 / 8)
