"""Eager torch.autocast (issue 14: the Hugging Face Trainer's fp16 runs of BERT-large were estimated
a quarter low): the fp32 model is the master copy, autocast keeps a 16-bit copy of every weight it
casts until the backward pass, layer_norm and softmax run and save in fp32, and the casts and
fp16's GradScaler stream HBM (planner/workload/memory.py, efficiency.py, frameworks.yaml)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from planner.gpu_specs import resolve_gpu
from planner.schema import Fabric, Interconnect
from planner.workload import efficiency as eff
from planner.workload import estimate, parse_workload
from planner.workload import memory as mem
from planner.workload import strategy as st
from planner.workload.estimate_types import Topology, topology_links
from planner.workload.frameworks import load_frameworks
from planner.workload.training import train_facts

V100_16 = resolve_gpu("V100-16GB")
ONE_GPU = Topology(gpus_per_node=1, interconnect=Interconnect.PCIE, fabric=Fabric.ETHERNET)
# bert-large-uncased: 335.14M parameters, 24 layers of 1,024, 16 heads, a 30,522-token vocabulary
BERT_LARGE = 335.14e6
VOCAB, HIDDEN, LAYERS, HEADS = 30522, 1024, 24, 16


def bert(precision: str = "fp16", zero: int = 0, micro_batch: int = 4, **training: Any) -> Any:
    """The transformers docs' single-GPU BERT-large run (seq 512, no SDPA), as F31-F39."""
    return parse_workload(
        {
            "name": "bert-amp",
            "kind": "finetune",
            "model": {"preset": "bert-large", "seq_len": 512},
            "data": {"samples": 512, "epochs": 1, "tokens_per_sample": 512},
            "training": {
                "precision": precision,
                "framework": "hf-trainer",
                "optimizer": "adamw",
                "activation_checkpointing": "none",
                "flash_attention": False,
                "global_batch_samples": micro_batch,
                "parallelism": {
                    "micro_batch": micro_batch,
                    "zero": zero,
                    "tensor": 1,
                    "pipeline": 1,
                },
                **training,
            },
        }
    )


def test_autocast_stacks() -> None:
    """The eager stacks that wrap the forward pass in torch.autocast over an fp32 model; the ones
    that convert the model to 16 bits themselves or compile the step do not."""
    autocast = {name for name, p in load_frameworks().items() if p.autocast}
    assert autocast == {"hf-trainer", "pytorch-fsdp", "lightning"}


@pytest.mark.parametrize(
    ("precision", "expected"),
    [
        ("fp16", True),  # torch.cuda.amp.autocast + GradScaler
        ("bf16", True),  # autocast without a scaler
        ("fp32", False),  # nothing to cast
        ("pure-bf16", False),  # the model itself is bf16
    ],
)
def test_which_precisions_autocast(precision: str, expected: bool) -> None:
    f = train_facts(bert(precision))
    assert (f.autocast_state is not None) is expected
    assert (f.autocast_params > 0) is expected


def test_the_weight_cache_is_two_bytes_per_cast_parameter() -> None:
    """Every trainable weight but the token embedding (a lookup, on no autocast list) is cast once
    per forward pass and kept for the backward pass: 2 bytes each."""
    f = train_facts(bert())
    cast = BERT_LARGE - VOCAB * HIDDEN
    assert f.autocast_params == pytest.approx(cast)
    assert mem.autocast_cache_bytes(f.autocast_params) == pytest.approx(2.0 * cast)


def test_a_tied_output_head_casts_the_embedding_too() -> None:
    assert mem.autocast_cast_params(100.0, 0.0) == 100.0
    assert mem.autocast_cast_params(100.0, 30.0) == 70.0


def test_model_states_are_fp32_plus_the_cache() -> None:
    """F34's layout: fp32 weights and gradients (4 + 4), AdamW's moments (8), the 16-bit copies."""
    b = estimate(bert(), V100_16, 1).memory_breakdown_gib
    cast = BERT_LARGE - VOCAB * HIDDEN
    assert b["weights"] == pytest.approx((4.0 * BERT_LARGE + 2.0 * cast) / mem.GIB)
    assert b["gradients"] == pytest.approx(4.0 * BERT_LARGE / mem.GIB)
    assert b["optimizer_states"] == pytest.approx(8.0 * BERT_LARGE / mem.GIB)


def test_fp32_norms_and_softmax_under_autocast() -> None:
    """Per layer: Korthikanti's 34·s·b·h with the two LayerNorm inputs in fp32 (+4), and per a·s²·b
    the fp32 softmax output (4), the dropout mask (1) and the value matmul's fp16 cast (2)."""
    b = estimate(bert(), V100_16, 1).memory_breakdown_gib
    s, mb = 512, 4
    per_layer = (34.0 + 4.0) * s * mb * HIDDEN + 7.0 * HEADS * s * s * mb
    assert b["activations"] == pytest.approx(LAYERS * per_layer / mem.GIB)


@pytest.mark.parametrize(("dropout", "expected"), [(True, 7.0), (False, 6.0)])
def test_softmax_bytes(dropout: bool, expected: float) -> None:
    assert mem.autocast_score_bytes_per_as2b(dropout=dropout) == expected


def test_an_eager_rmsnorm_is_not_counted_twice() -> None:
    """A Llama-style model on an eager stack already keeps its norms' fp32 inputs."""
    assert mem.autocast_extra_bytes_per_sbh(fp32_norms_counted=True) == 0.0
    assert mem.autocast_extra_bytes_per_sbh(fp32_norms_counted=False) == 4.0
    spec = parse_workload(
        {
            "name": "llama-amp",
            "kind": "finetune",
            "model": "llama-2-7b",
            "data": {"tokens": 1e6},
            "training": {"precision": "bf16", "framework": "hf-trainer"},
        }
    )
    assert train_facts(spec).autocast_act_per_seq_layer == 0.0


def test_deepspeed_zero_keeps_its_own_16_bit_weights() -> None:
    """Under ZeRO the Trainer hands precision to DeepSpeed (16-bit module, fp32 master in the
    optimizer): the 2 + 2 + 12 split, no cache, Korthikanti's 16-bit activations."""
    zero1 = estimate(bert(zero=1), V100_16, 1).memory_breakdown_gib
    assert zero1["weights"] == pytest.approx(2.0 * BERT_LARGE / mem.GIB)
    s, mb = 512, 4
    per_layer = 34.0 * s * mb * HIDDEN + 5.0 * HEADS * s * s * mb
    assert zero1["activations"] == pytest.approx(LAYERS * per_layer / mem.GIB)


def test_the_casts_and_the_grad_scaler_take_their_bytes_at_the_bandwidth() -> None:
    """The step under autocast against the same facts without it: 12 bytes per cast parameter of
    casts, 8 per parameter of GradScaler unscaling, and the fp32 norms' and softmax's extra bytes
    written, read and their gradients written (3 passes), the fp32 score chain's kernels beyond
    those (14 + 18 bytes a score with dropout: efficiency.AUTOCAST_SCORE_BYTES_PER_ELEMENT) and
    the fp32 residual stream's (efficiency.AUTOCAST_STREAM_BYTES) -- all over HBM."""
    f = train_facts(bert())
    plain = replace(
        f,
        autocast_state=None,
        autocast_params=0.0,
        autocast_act_per_seq_layer=0.0,
        autocast_score_per_seq_layer=0.0,
    )
    links = topology_links(V100_16, ONE_GPU, 1)
    amp, _ = st.search_training(f, V100_16, 1, links, flash=False)
    off, _ = st.search_training(plain, V100_16, 1, links, flash=False)
    assert amp is not None and off is not None
    bw = V100_16.memory_bandwidth_gb_per_s * 1e9
    streamed = bw * eff.MEMORY_BW_FRACTION
    casts = f.autocast_params * 12.0 / streamed
    scaler = BERT_LARGE * 8.0 / streamed
    s, mb = 512, 4
    extra = LAYERS * mb * (4.0 * s * HIDDEN + 2.0 * HEADS * s * s)
    traffic = 3.0 * extra / bw
    chain = LAYERS * mb * s * (14.0 + 18.0) * HEADS * s / streamed
    # the fp32 residual stream: 40 + 80 bytes a hidden value with BERT's separate query, key and
    # value (efficiency.autocast_stream_bytes)
    stream = LAYERS * mb * s * HIDDEN * (40.0 + 80.0) / streamed
    assert amp.step_s - off.step_s == pytest.approx(
        casts + scaler + traffic + chain + stream, rel=1e-9
    )


def test_bf16_has_no_grad_scaler() -> None:
    """transformers' Trainer: "bf16 does not need grad scaling"."""
    a100 = resolve_gpu("A100-80GB")
    links = topology_links(a100, ONE_GPU, 1)
    steps = {}
    for precision in ("fp16", "bf16"):
        f = train_facts(bert(precision))
        c, _ = st.search_training(f, a100, 1, links, flash=False)
        assert c is not None
        steps[precision] = c.step_s
    streamed = a100.memory_bandwidth_gb_per_s * 1e9 * eff.MEMORY_BW_FRACTION
    assert steps["fp16"] - steps["bf16"] == pytest.approx(BERT_LARGE * 8.0 / streamed, rel=1e-9)


def _peak(precision: str, zero: int = 0, **training: Any) -> float:
    return estimate(bert(precision, zero, **training), V100_16, 1).memory_per_gpu_gib


def test_issue_14_fp16_saves_about_what_was_published() -> None:
    """Issue 14: the transformers docs measured 14,949 MB in fp32 and 13,939 MB under fp16
    autocast (BERT-large, batch 4 x 512, V100 16GB), a saving of about 1 GB.  Counting 16-bit
    states and activations (the layout without autocast, as ZeRO's) saves 3 GiB; with autocast's
    fp32 model, weight copies, norms and softmax the estimate is nearer the published saving than
    half that error."""
    published = (14949 - 13939) * 2**20 / mem.GIB
    saving = _peak("fp32") - _peak("fp16")
    naive = _peak("fp32") - _peak("fp16", zero=1)
    assert abs(saving - published) < abs(naive - published) / 2.0


def test_issue_14_with_checkpointing_fp16_needs_more_than_fp32() -> None:
    """The same docs with gradient checkpointing at batch 1: 6,775 MB in fp32, 7,275 MB in fp16.
    With next to no activations the 16-bit weight copies outweigh what fp16 saves; the estimate
    grows too, by no more than those copies (and their allocator share)."""
    fp32 = _peak("fp32", micro_batch=1, activation_checkpointing="full")
    fp16 = _peak("fp16", micro_batch=1, activation_checkpointing="full")
    cache = mem.autocast_cache_bytes(BERT_LARGE - VOCAB * HIDDEN) / mem.GIB
    assert 0.0 < fp16 - fp32 <= cache * (1.0 + mem.FRAGMENTATION)


def test_a_layout_under_autocast_all_reduces_fp32_gradients_even_in_pre_training() -> None:
    # review: the fp32 leaves' gradients are what DDP reduces under autocast, 4 bytes each, also
    # for a pre-training run (whose facts default to 16-bit gradient exchanges for the fused stacks)
    spec = bert(framework="pytorch-fsdp").variant(kind="pretrain")
    f = train_facts(spec)
    assert f.grad_comm_bytes == 2.0 and st.autocast_layout(f, 0)
    gpu = resolve_gpu("A100-80GB")
    topo = Topology(gpus_per_node=8, interconnect=Interconnect.NVSWITCH, fabric=Fabric.ETHERNET)
    links = topology_links(gpu, topo, 8)
    s = st._setup(f, gpu, 8, links, flash=False)
    ddp = st._sync_seconds(f, s, 8, 8, 1.0, 0)
    zero1 = st._sync_seconds(f, s, 8, 8, 1.0, 1)  # ZeRO keeps 16-bit gradients
    assert ddp == pytest.approx(2.0 * zero1)
    assert ddp == pytest.approx(st.collective_seconds(2.0, f.trainable * 4.0, 8, 8, links))
