"""Upper bounds on a workload's numbers, and the names a field takes (the workload schema,
:mod:`planner.workload.spec`, and the Hugging Face config reader, :mod:`planner.workload.hf_config`,
check against them)."""

# Upper bounds, each far past the largest published run (a bigger value is a typo or a unit
# slip, and would reach the estimator as inf/nan or an endless search):
# - parameters 1e14: the largest published models have ~2e12 (dense or MoE total);
# - tokens 1e15 per piece: the largest published pre-training runs use 1.5e13 (Llama 3) to
#   3.6e13 (Qwen3) tokens;
# - samples 1e13, epochs 1e4; sequence length 1e8 (the longest context windows are 1e7);
# - a global batch of 1e9 tokens (the largest published are ~6e7); 1e5 pieces (sweep trials);
# - serving: 1e9 output tokens/s, ten years of hours, 1e16 tokens in a batch job.
MAX_PARAMS = 1e14
MAX_TOKENS = 1e15
MAX_SAMPLES = 1e13
MAX_EPOCHS = 1e4
# DataLoader worker processes per GPU: a host has at most a few hundred cores (AWS p5.48xlarge:
# 192 vCPUs for 8 GPUs)
MAX_LOADER_WORKERS = 256
MAX_SEQ_LEN = 100_000_000
MAX_BATCH_TOKENS = 1e9
MAX_PIECES = 100_000
MAX_LAYER_COUNT = 100_000  # layers, heads, tensor and pipeline degrees
MAX_HIDDEN = 10_000_000
MAX_SERVING_HOURS = 87_600.0
MAX_BEAM_WIDTH = 1024  # beams per request: a bound against typos (summarisers use 4 to 10)
# An engine's largest batch (inference.max_batch): 65,536 requests or images, far past what engines
# run (vLLM's max_num_seqs defaults to 256 to 1,024; TensorRT-LLM engines are built for up to a
# few thousand; MLPerf's offline image runs batch a few thousand images); 10 million was read and
# priced a 7B model's service on 8 B200s for its workspace alone.
MAX_SERVING_BATCH = 65_536
# The least p95 latency target a request may set: a tenth of a millisecond.  One decoding step of
# the smallest model on the fastest GPU, its kernels launched as one CUDA graph, takes a few
# milliseconds (the serving model's step overhead and per-layer kernel time), so a target below a
# tenth of one is seconds typed as milliseconds (0.06 for 60 ms); between the two the quote names
# the fastest target the fleets reach (exit 3).  A workload file's inference.slo and the service
# quote's options share it.
MIN_LATENCY_MS = 0.1
# The longest p95 target each latency takes: a token (its time to first token, or between tokens)
# an hour, a whole request a day -- bounds against a unit slipped by thousands, shared by a
# workload file's inference.slo, the service quote's arguments and the command line's options.
MAX_LATENCY_MS = {
    "ttft_ms_p95": 3_600_000.0,
    "tpot_ms_p95": 3_600_000.0,
    "e2e_ms_p95": 86_400_000.0,
}


# The MLP activations model.activation takes, as config.json names them (activation_function,
# hidden_act; transformers' ACT2FN).  Only gelu_new and gelu_accurate (the tanh approximation with
# torch.pow, which autocast runs in fp32) change an estimate, on a stack that runs the model's
# modules as written (efficiency.ARITHMETIC_GELU); gelu_fast, gelu_python and quick_gelu are
# several kernels of arithmetic too but stay in 16 bits and are counted as fused (U), the others
# are one kernel each (linear none).
ACTIVATIONS = (
    "gelu",
    "gelu_new",
    "gelu_fast",
    "gelu_pytorch_tanh",
    "gelu_python",
    "gelu_accurate",
    "quick_gelu",
    "relu",
    "relu2",
    "relu6",
    "leaky_relu",
    "silu",
    "swish",
    "mish",
    "tanh",
    "sigmoid",
    "linear",
)


def canonical_activation(name: str) -> str:
    """An activation's name as :data:`ACTIVATIONS` spells it: lower case, ``_`` for ``-`` and for
    runs of spaces."""
    return "_".join(name.strip().lower().replace("-", "_").split())
