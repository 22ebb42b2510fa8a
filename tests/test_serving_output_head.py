"""The output head in serving: low-bit checkpoints keep it 16-bit (ModelOpt's exclude_modules
["lm_head"]; vLLM quantises Linear layers, not its LM head) except llama.cpp's GGUF, which
quantises it with the rest; and it projects only the tokens that are sampled (each decoding token
and a prompt's last), not every prompt token."""

from __future__ import annotations

import pytest

from planner.gpu_specs import resolve_gpu
from planner.workload.parallel import Links
from planner.workload.serving import ModelShape, Replica, serving_stack

# Llama 3 8B: 8.03B parameters, an untied 128,256 x 4,096 embedding (525.3M) and head (525.3M)
HEAD = 128256 * 4096  # 525,336,576
LLAMA3_8B = ModelShape(
    params=8.03e9,
    layers=32,
    hidden=4096,
    heads=32,
    kv_heads=8,
    lookup_params=float(HEAD),
    vocab=128256,
)
ONE = Links(gpus_per_node=1, intra_bytes_per_s=64e9, intra_kind="pcie", node_bytes_per_s=50e9)


def _replica(stack: str, precision: str) -> Replica:
    return Replica(LLAMA3_8B, resolve_gpu("H100"), 1, ONE, serving_stack(stack), precision)


def test_an_fp8_checkpoint_keeps_a_16bit_head() -> None:
    r = _replica("tensorrt-llm", "fp8")
    assert r.head_16bit
    # 8.03e9 x 1 byte + the head's second byte: 8.03e9 + 525.3e6 = 8.5553e9 bytes
    assert r.weight_bytes_per_gpu == pytest.approx(8.03e9 + HEAD)
    # a batch-1 step reads all but the embedding table at 1 byte, and the head's second byte:
    # (8.03e9 - 525.3e6) + 525.3e6 = 8.03e9 bytes at 3,350 GB/s x 0.85 = 2.8200 ms (2.6355 ms
    # with an fp8 head)
    assert r._weights_read(1) / r.bandwidth_bytes_per_s == pytest.approx(2.8200e-3, rel=1e-4)


def test_gguf_quantises_the_head_and_16bit_weights_have_nothing_to_add() -> None:
    assert not _replica("llama.cpp", "int4").head_16bit
    bf16 = _replica("vllm", "bf16")
    assert bf16.weight_bytes_per_gpu == pytest.approx(8.03e9 * 2)


def test_a_prompt_projects_only_its_last_token_through_the_head() -> None:
    # 2,048 prompt tokens of one prompt: the body's 7.5047e9 - 0.5253e9 = 6.9794e9 matmul
    # parameters on every token, the head's 0.5253e9 on one: (6.9794e9 x 2,048 + 0.5253e9) /
    # (7.5047e9 x 2,048) = 0.93004 of the FLOPs of running the head on every token
    r = _replica("vllm", "bf16")
    every = r._matmul_flop_seconds(2048)
    last = r._matmul_flop_seconds(2048, 1)
    assert last / every == pytest.approx(0.93004, rel=1e-4)
