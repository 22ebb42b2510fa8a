"""Measure, on a CUDA machine, what the training estimator's physics assumes.

Not a test and not run by CI (it needs a GPU, PyTorch and transformers, none of which the planner
depends on).  It writes one JSON object per line to ``--out`` and prints the same lines:

- ``gemm``: the three matmuls of a training linear layer (forward ``x·Wᵀ``, input gradient
  ``dy·W``, weight gradient ``dyᵀ·x``) at transformer widths, in each precision the GPU runs;
- ``sdpa``: ``F.scaled_dot_product_attention`` forward and forward + backward, causal, by backend;
- ``stream``: a device copy, a fused add and a layer norm, in bytes moved per second;
- ``train``: whole training steps of transformers models built from their configs (random
  weights; the weights do not change the time), AdamW, eager PyTorch, by precision recipe, with
  the step time and the allocator's peak memory;
- ``ablate``: GPT-2 steps with one eager cost taken away at a time (ABLATIONS);
- ``casts``: one GPT-2 and one BERT autocast step's aten operators by input shape and dtype;
- ``profile``: kernel time by kernel name over profiled training steps of some of those cases;
- ``generate``: greedy decoding with ``model.generate`` at several batch sizes.

    python benchmarks/gpu_probe.py --out probe.jsonl --budget-s 330

Each section stops starting new cases once the budget is spent, so a short lease still returns
what it measured.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

_START = time.perf_counter()


def _elapsed() -> float:
    return time.perf_counter() - _START


class Probe:
    def __init__(self, out: str, budget_s: float) -> None:
        self.out = open(out, "w", encoding="utf-8")  # noqa: SIM115 - kept for the whole run
        self.budget_s = budget_s

    def emit(self, **row: Any) -> None:
        row["t_s"] = round(_elapsed(), 1)
        line = json.dumps(row, sort_keys=True)
        print(line, flush=True)
        self.out.write(line + "\n")
        self.out.flush()

    def left(self) -> float:
        return self.budget_s - _elapsed()


def _cuda_time(fn: Callable[[], Any], *, iters: int, warm: int = 3, groups: int = 5) -> float:
    """Seconds per call: ``iters`` calls queued back to back between two CUDA events, as a training
    step queues its kernels (each call's launch hidden behind the one before), the median over
    ``groups`` such runs."""
    import torch

    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(groups):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / iters)
    return statistics.median(times)


def environment(probe: Probe) -> None:
    import subprocess

    import torch

    props = torch.cuda.get_device_properties(0)
    row: dict[str, Any] = {
        "section": "env",
        "gpu": props.name,
        "sms": props.multi_processor_count,
        "memory_bytes": props.total_memory,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "python": sys.version.split()[0],
    }
    try:
        import transformers

        row["transformers"] = transformers.__version__
    except ImportError:
        pass
    try:
        row["nvidia_smi"] = subprocess.run(
            [
                "nvidia-smi",
                "--query-gpu=driver_version,power.limit,clocks.max.sm,clocks.max.mem",
                "--format=csv,noheader",
            ],
            capture_output=True,
            text=True,
            timeout=20,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        row["nvidia_smi"] = f"unavailable: {exc}"
    probe.emit(**row)


def gemm(probe: Probe) -> None:
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    widths = [768, 1024, 1280, 2048, 4096, 8192]
    # (in, out) of a layer's matmuls, by multiples of the hidden size: fused QKV, attention
    # output, MLP up, MLP down
    layers = [(1, 3), (1, 1), (1, 4), (4, 1)]
    plans: list[tuple[str, list[int], list[int]]] = [
        ("bf16", widths, [2048, 8192, 32768]),
        ("fp16", [1024, 4096, 8192], [8192]),
        ("tf32", [1024, 4096, 8192], [8192]),
        ("fp32", [1024, 4096], [8192]),
        ("fp8", [1024, 2048, 4096, 8192], [8192, 32768]),
    ]
    for precision, hs, tokens_list in plans:
        for h in hs:
            for m in tokens_list:
                for k_mult, n_mult in layers:
                    if probe.left() < 0:
                        return
                    k, n = h * k_mult, h * n_mult
                    try:
                        seconds = _gemm_case(precision, m, k, n)
                    except Exception as exc:  # a dtype or layout this build lacks
                        probe.emit(section="gemm", precision=precision, error=repr(exc)[:200])
                        break
                    flops = 2.0 * m * k * n
                    probe.emit(
                        section="gemm",
                        precision=precision,
                        hidden=h,
                        m=m,
                        k=k,
                        n=n,
                        forward_s=seconds[0],
                        dgrad_s=seconds[1],
                        wgrad_s=seconds[2],
                        tflops=[round(flops / s / 1e12, 1) for s in seconds],
                    )
    torch.backends.cuda.matmul.allow_tf32 = False


def _gemm_case(precision: str, m: int, k: int, n: int) -> tuple[float, float, float]:
    import torch

    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    flops = 2.0 * m * k * n
    iters = max(5, min(50, int(2e13 / flops)))
    if precision == "fp8":
        f8 = torch.float8_e4m3fn
        one = torch.ones((), device="cuda")
        x = torch.randn(m, k, device="cuda").to(f8)
        w = torch.randn(n, k, device="cuda").to(f8)
        dy = torch.randn(m, n, device="cuda").to(f8)
        # _scaled_mm takes a row-major A and a column-major B: every operand pair below is laid
        # out so, as Transformer Engine's transposed fp8 copies are
        dy_t = dy.t().contiguous()
        x_t = x.t().contiguous()
        w_t = w.t().contiguous()

        def mm(a: Any, b: Any) -> Any:
            return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

        return (
            _cuda_time(lambda: mm(x, w.t()), iters=iters),
            _cuda_time(lambda: mm(dy, w_t.t()), iters=iters),
            _cuda_time(lambda: mm(dy_t, x_t.t()), iters=iters),
        )
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision, torch.float32)
    x = torch.randn(m, k, device="cuda", dtype=dtype)
    w = torch.randn(n, k, device="cuda", dtype=dtype)
    dy = torch.randn(m, n, device="cuda", dtype=dtype)
    return (
        _cuda_time(lambda: x @ w.t(), iters=iters),
        _cuda_time(lambda: dy @ w, iters=iters),
        _cuda_time(lambda: dy.t() @ x, iters=iters),
    )


def sdpa(probe: Probe) -> None:
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backends = {
        "flash": SDPBackend.FLASH_ATTENTION,
        "cudnn": SDPBackend.CUDNN_ATTENTION,
        "efficient": SDPBackend.EFFICIENT_ATTENTION,
    }
    tokens = 16384
    for head_dim, heads in ((64, 16), (128, 16), (128, 32)):
        for seq in (512, 1024, 2048, 4096, 8192):
            for name, backend in backends.items():
                if probe.left() < 0:
                    return
                batch = tokens // seq
                shape = (batch, heads, seq, head_dim)
                q, k, v = (
                    torch.randn(shape, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                    for _ in range(3)
                )
                grad = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
                try:
                    with sdpa_kernel([backend]):

                        def fwd(q: Any = q, k: Any = k, v: Any = v) -> Any:
                            return F.scaled_dot_product_attention(q, k, v, is_causal=True)

                        def fwd_bwd(q: Any = q, k: Any = k, v: Any = v, g: Any = grad) -> None:
                            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                            out.backward(g)

                        t_fwd = _cuda_time(fwd, iters=10)
                        t_both = _cuda_time(fwd_bwd, iters=10)
                except Exception as exc:
                    probe.emit(section="sdpa", backend=name, seq=seq, error=repr(exc)[:200])
                    continue
                # causal: half of the 4·b·h·s²·d forward FLOPs; the backward 2.5x the forward
                flops_fwd = 4.0 * batch * heads * seq * seq * head_dim * 0.5
                probe.emit(
                    section="sdpa",
                    backend=name,
                    seq=seq,
                    head_dim=head_dim,
                    heads=heads,
                    batch=batch,
                    forward_s=t_fwd,
                    forward_backward_s=t_both,
                    forward_tflops=round(flops_fwd / t_fwd / 1e12, 1),
                    backward_tflops=round(2.5 * flops_fwd / max(t_both - t_fwd, 1e-9) / 1e12, 1),
                )


def stream(probe: Probe) -> None:
    import torch
    import torch.nn.functional as F

    n = 1 << 29  # 1 GiB in bf16
    a = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty_like(a)
    t = _cuda_time(lambda: c.copy_(a), iters=20)
    probe.emit(section="stream", op="copy", bytes=4 * n, seconds=t, gb_per_s=round(4 * n / t / 1e9))
    t = _cuda_time(lambda: torch.add(a, b, out=c), iters=20)
    probe.emit(section="stream", op="add", bytes=6 * n, seconds=t, gb_per_s=round(6 * n / t / 1e9))
    x = a.view(-1, 4096)
    ln = torch.nn.LayerNorm(4096, device="cuda", dtype=torch.bfloat16)
    t = _cuda_time(lambda: ln(x), iters=20)
    probe.emit(
        section="stream", op="layernorm", bytes=4 * n, seconds=t, gb_per_s=round(4 * n / t / 1e9)
    )
    t = _cuda_time(lambda: F.gelu(a), iters=20)
    probe.emit(section="stream", op="gelu", bytes=4 * n, seconds=t, gb_per_s=round(4 * n / t / 1e9))


def _configs() -> dict[str, Any]:
    from transformers import BertConfig, GPT2Config, LlamaConfig

    return {
        "gpt2": lambda: GPT2Config(n_embd=768, n_layer=12, n_head=12),
        "gpt2-medium": lambda: GPT2Config(n_embd=1024, n_layer=24, n_head=16),
        "gpt2-large": lambda: GPT2Config(n_embd=1280, n_layer=36, n_head=20),
        # TinyLlama 1.1B's shape (TinyLlama/TinyLlama-1.1B-intermediate-step-1431k-3T config.json)
        "llama-1.1b": lambda: LlamaConfig(
            hidden_size=2048,
            intermediate_size=5632,
            num_hidden_layers=22,
            num_attention_heads=32,
            num_key_value_heads=4,
            vocab_size=32000,
            max_position_embeddings=2048,
        ),
        "bert-base": lambda: BertConfig(),
    }


# GPT-2 small with one eager cost taken away at a time: the vocabulary padded to 50,304 (aligned
# output-layer GEMMs), transformers' fused tanh GELU (gelu_pytorch_tanh) in place of gelu_new's
# Python arithmetic, torch's fused AdamW in place of its foreach path
ABLATIONS: list[tuple[str, int, int, str, str]] = [
    ("gpt2", 1024, 16, "amp-bf16", ""),
    ("gpt2", 1024, 16, "amp-bf16", "vocab50304"),
    ("gpt2", 1024, 16, "amp-bf16", "gelu-tanh"),
    ("gpt2", 1024, 16, "amp-bf16", "fused-adamw"),
    ("gpt2", 1024, 16, "amp-bf16", "vocab50304+gelu-tanh+fused-adamw"),
    ("gpt2", 1024, 16, "pure-bf16", "vocab50304+gelu-tanh+fused-adamw"),
    ("gpt2", 1024, 16, "tf32", "vocab50304"),
    ("gpt2-large", 1024, 4, "amp-bf16", "vocab50304+gelu-tanh+fused-adamw"),
    ("bert-base", 512, 32, "amp-bf16", "fused-adamw"),
]


def train(
    probe: Probe,
    *,
    steps: int,
    warm: int,
    cases: list[tuple[str, int, int, str, str]] | None = None,
) -> None:
    import torch

    cases = cases or [
        # model, seq, batch, precision, variant
        ("gpt2", 1024, 16, "amp-bf16", ""),
        ("gpt2", 1024, 16, "fp32", ""),
        ("gpt2", 1024, 16, "tf32", ""),
        ("gpt2", 1024, 16, "amp-fp16", ""),
        ("gpt2", 1024, 16, "pure-bf16", ""),
        ("gpt2", 1024, 4, "amp-bf16", ""),
        ("llama-1.1b", 2048, 2, "amp-bf16", ""),
        ("llama-1.1b", 2048, 2, "tf32", ""),
        ("llama-1.1b", 2048, 2, "pure-bf16", ""),
        ("llama-1.1b", 2048, 2, "fp32", ""),
        ("llama-1.1b", 2048, 8, "amp-bf16", "checkpointing"),
        ("llama-1.1b", 2048, 8, "pure-bf16", ""),
        ("gpt2-medium", 1024, 8, "amp-bf16", ""),
        ("gpt2-medium", 1024, 8, "tf32", ""),
        ("gpt2-large", 1024, 4, "amp-bf16", ""),
        ("gpt2-large", 1024, 4, "tf32", ""),
        ("bert-base", 512, 32, "amp-bf16", ""),
        ("bert-base", 512, 32, "fp32", ""),
        ("bert-base", 128, 32, "amp-fp16", ""),
        ("gpt2", 1024, 16, "amp-bf16", "compile"),
    ]
    configs = _configs()
    for model_name, seq, batch, precision, variant in cases:
        if probe.left() < 0:
            return
        row: dict[str, Any] = {
            "section": "train",
            "model": model_name,
            "seq": seq,
            "batch": batch,
            "precision": precision,
            "variant": variant,
        }
        try:
            row.update(
                _train_case(configs[model_name](), seq, batch, precision, variant, steps, warm)
            )
        except torch.cuda.OutOfMemoryError:
            row["oom"] = True
            row["max_allocated_bytes"] = torch.cuda.max_memory_allocated()
        except Exception as exc:
            row["error"] = repr(exc)[:300]
        probe.emit(**row)
        torch.cuda.empty_cache()


def _build_step(
    config: Any, seq: int, batch: int, precision: str, options: set[str]
) -> tuple[Callable[[], None], Any, float]:
    """(one training step of ``config`` on ``batch`` x ``seq`` random tokens, the model, seconds
    to build it): transformers' model from its config on the GPU, torch's AdamW, the precision
    recipe (autocast and a GradScaler for amp-fp16, the model cast for pure-bf16, TF32 matmuls
    for tf32) and the variant's ``options`` (vocab50304, gelu-tanh, checkpointing, fused-adamw,
    compile)."""
    import gc

    import torch
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM

    gc.collect()
    torch.cuda.empty_cache()
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = precision == "tf32"
    if "vocab50304" in options:
        config.vocab_size = 50304
    if "gelu-tanh" in options:
        config.activation_function = "gelu_pytorch_tanh"
    loader = AutoModelForMaskedLM if config.model_type == "bert" else AutoModelForCausalLM
    built = time.perf_counter()
    with torch.device("cuda"):
        model = loader.from_config(config, attn_implementation="sdpa")
    if precision == "pure-bf16":
        model = model.to(torch.bfloat16)
    if "checkpointing" in options:
        model.gradient_checkpointing_enable()
    model.train()
    build_s = time.perf_counter() - built
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, fused="fused-adamw" in options)
    scaler = torch.amp.GradScaler("cuda") if precision == "amp-fp16" else None
    autocast_dtype = {"amp-bf16": torch.bfloat16, "amp-fp16": torch.float16}.get(precision)
    ids = torch.randint(0, config.vocab_size, (batch, seq), device="cuda")
    forward = torch.compile(model) if "compile" in options else model

    def step() -> None:
        with torch.autocast(
            "cuda", dtype=autocast_dtype or torch.bfloat16, enabled=autocast_dtype is not None
        ):
            loss = forward(input_ids=ids, labels=ids).loss
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step, model, build_s


def _timed(step: Callable[[], None], *, warm: int, steps: int) -> tuple[float, list[float]]:
    """(seconds of the first call, each of ``steps`` calls' seconds after ``warm`` calls in all)."""
    import torch

    first = time.perf_counter()
    step()
    torch.cuda.synchronize()
    first_s = time.perf_counter() - first
    for _ in range(warm - 1):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return first_s, times


def _train_case(
    config: Any, seq: int, batch: int, precision: str, variant: str, steps: int, warm: int
) -> dict[str, Any]:
    import torch

    step, model, build_s = _build_step(config, seq, batch, precision, set(variant.split("+")))
    torch.cuda.reset_peak_memory_stats()
    first_s, times = _timed(step, warm=warm, steps=steps)
    return {
        "params": sum(p.numel() for p in model.parameters()),
        "attn": getattr(model.config, "_attn_implementation", None),
        "build_s": round(build_s, 2),
        "first_step_s": round(first_s, 3),
        "step_s": statistics.median(times),
        "step_s_all": [round(t, 4) for t in times],
        "tokens_per_s": round(batch * seq / statistics.median(times)),
        "max_allocated_bytes": torch.cuda.max_memory_allocated(),
        "max_reserved_bytes": torch.cuda.max_memory_reserved(),
    }


def profile(probe: Probe) -> None:
    """Kernel time by kernel name over two profiled training steps of a few of the cases above."""
    import torch
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    cases: list[tuple[str, int, int, str, dict[str, Any]]] = [
        ("gpt2", 1024, 16, "amp-bf16", {}),
        ("gpt2", 1024, 16, "amp-bf16", {"attn_pdrop": 0.0}),
        ("gpt2", 1024, 16, "tf32", {}),
        ("llama-1.1b", 2048, 2, "amp-bf16", {}),
        ("llama-1.1b", 2048, 2, "tf32", {}),
        ("llama-1.1b", 2048, 2, "tf32", {"num_key_value_heads": 32}),
        ("bert-base", 512, 32, "amp-bf16", {}),
        ("gpt2-large", 1024, 4, "amp-bf16", {}),
    ]
    configs = _configs()
    for model_name, seq, batch, precision, overrides in cases:
        if probe.left() < 0:
            return
        config = configs[model_name]()
        for key, value in overrides.items():
            setattr(config, key, value)
        steps = 2
        try:
            step, wall = _train_step(config, seq, batch, precision)
            with torch_profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(steps):
                    step()
                torch.cuda.synchronize()
        except Exception as exc:
            probe.emit(section="profile", model=model_name, error=repr(exc)[:300])
            continue
        kernels: dict[str, list[float]] = {}
        for event in prof.events():
            if event.device_type.name != "CUDA":
                continue
            entry = kernels.setdefault(event.name, [0.0, 0])
            entry[0] += event.time_range.elapsed_us() / 1e6 / steps
            entry[1] += 1 / steps
        ranked = sorted(kernels.items(), key=lambda item: -item[1][0])
        probe.emit(
            section="profile",
            model=model_name,
            seq=seq,
            batch=batch,
            precision=precision,
            overrides=overrides,
            step_s=wall,
            kernel_s=sum(v[0] for v in kernels.values()),
            kernels=len(kernels),
            launches=sum(v[1] for v in kernels.values()),
            top=[[name[:160], round(v[0], 6), v[1]] for name, v in ranked[:60]],
        )
        torch.cuda.empty_cache()


def casts(probe: Probe) -> None:
    """Where an eager autocast step's copy kernels come from: the aten operators of one profiled
    GPT-2 and one BERT step grouped by input shapes and dtypes, their device time and count."""
    import torch
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    configs = _configs()
    for model_name, seq, batch in (("gpt2", 1024, 16), ("bert-base", 512, 32)):
        if probe.left() < 0:
            return
        step, wall = _train_step(configs[model_name](), seq, batch, "amp-bf16")
        with torch_profile(
            activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True
        ) as prof:
            step()
            torch.cuda.synchronize()
        rows = []
        for item in prof.key_averages(group_by_input_shape=True):
            device_s = getattr(item, "self_device_time_total", 0.0) / 1e6
            if device_s <= 0.0:
                continue
            rows.append([item.key, str(item.input_shapes)[:200], round(device_s, 6), item.count])
        rows.sort(key=lambda r: -r[2])
        probe.emit(section="casts", model=model_name, step_s=wall, ops=rows[:80])
        torch.cuda.empty_cache()


def _train_step(
    config: Any, seq: int, batch: int, precision: str
) -> tuple[Callable[[], None], float]:
    """A warmed-up training step of ``config`` and its median wall time over five steps."""
    step, _, _ = _build_step(config, seq, batch, precision, set())
    _, times = _timed(step, warm=3, steps=5)
    return step, statistics.median(times)


def generate(probe: Probe) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    torch.backends.cuda.matmul.allow_tf32 = False
    config = _configs()["llama-1.1b"]()
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(config, attn_implementation="sdpa")
    model = model.to(torch.bfloat16).eval()
    prompt, new = 128, 128
    for batch in (1, 8, 32, 128):
        if probe.left() < 0:
            return
        ids = torch.randint(0, config.vocab_size, (batch, prompt), device="cuda")

        def run(ids: Any = ids) -> None:
            with torch.no_grad():
                model.generate(
                    ids,
                    attention_mask=torch.ones_like(ids),
                    max_new_tokens=new,
                    min_new_tokens=new,
                    do_sample=False,
                    pad_token_id=0,
                )

        run()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        run()
        torch.cuda.synchronize()
        seconds = time.perf_counter() - t0
        probe.emit(
            section="generate",
            model="llama-1.1b",
            precision="bf16",
            batch=batch,
            prompt_tokens=prompt,
            new_tokens=new,
            seconds=seconds,
            output_tokens_per_s=round(batch * new / seconds),
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="probe.jsonl")
    parser.add_argument("--budget-s", type=float, default=330.0)
    parser.add_argument("--sections", default="env,stream,gemm,sdpa,train,generate")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--warm", type=int, default=3)
    args = parser.parse_args(argv)
    probe = Probe(args.out, args.budget_s)
    sections = args.sections.split(",")
    # each section's share of the budget, so that a slow one cannot starve the rest
    shares = {
        "stream": 0.03,
        "gemm": 0.15,
        "sdpa": 0.12,
        "train": 0.6,
        "generate": 0.1,
        "profile": 1.0,
        "ablate": 0.3,
        "casts": 1.0,
    }
    spent = 0.0
    for name in sections:
        if name == "env":
            environment(probe)
            continue
        spent += shares.get(name, 0.1)
        probe.budget_s = args.budget_s * spent
        if name == "train":
            train(probe, steps=args.steps, warm=args.warm)
        elif name == "profile":
            profile(probe)
        elif name == "casts":
            casts(probe)
        elif name == "ablate":
            train(probe, steps=args.steps, warm=args.warm, cases=ABLATIONS)
        else:
            {"stream": stream, "gemm": gemm, "sdpa": sdpa, "generate": generate}[name](probe)
    probe.out.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
