"""GPU memory of a training or inference job, per GPU, in bytes (pure functions).

Conventions (why these numbers):

- **Mixed-precision AdamW = 16 bytes per parameter**: 2 (bf16/fp16 weights) + 2 (16-bit gradients)
  + 12 (fp32 master copy 4 + Adam m 4 + v 4).  This is the ZeRO paper's (2 + 2 + K)·Ψ with K = 12
  (Rajbhandari et al. 2020, s3.1), also the HF Ultrascale Playbook's figure, for stacks that hold
  16-bit weights (Megatron, DeepSpeed, FSDP mixed precision).  Tools that keep fp32 gradients
  charge 18 (EleutherAI cookbook, HF "model memory anatomy"): that is eager torch.autocast's count,
  fp32 weights 4 + fp32 gradients 4 + Adam 8 + the 16-bit copies autocast casts 2 (below).  Pure
  fp32 AdamW is 4 + 4 + 8 = 16.
- Optimizer state bytes per parameter beyond the master copy: AdamW 8 (m, v), 8-bit AdamW 2
  (bitsandbytes block-wise quantised m, v; HF memory-anatomy doc), Lion 4 (one momentum; Chen et al.
  2023), SGD with momentum 4, Adafactor ~0 (factored second moment, no momentum; Shazeer & Stern 2018).
- Paged optimizers (bitsandbytes ``PagedAdamW`` 32-bit, ``PagedAdamW8bit``; HF Trainer ``optim``
  ``paged_adamw_32bit`` / ``paged_adamw_8bit``) allocate their states in CUDA unified memory; paging
  "only becomes active if you run out of GPU memory. When that happens, memory is transferred
  page-by-page from GPU to CPU" (bitsandbytes docs, 8-bit optimizers, "Paged optimizers",
  huggingface.co/docs/bitsandbytes/explanations/optimizers).  So the states count
  against the GPU only as far as it has room left after the weights, gradients, activations and
  working buffers; the rest lives in host RAM (:func:`paged_spill_bytes`).  bitsandbytes sizes
  those states by its own width whatever the parameters' dtype (``get_state_buffer(p,
  dtype=torch.float32)`` for 32-bit, uint8 for 8-bit; bitsandbytes/optim/optimizer.py), so under
  ``pure-bf16`` a paged 32-bit AdamW still keeps 8 bytes per parameter, not 4; the fp32 master copy
  of mixed precision is an ordinary tensor and stays on the GPU.
- ZeRO-1 shards optimizer states, ZeRO-2 also gradients, ZeRO-3 / FSDP full-shard also weights, each
  over the data-parallel size; tensor and pipeline parallel divide all model states by tp·pp.
- Activations per transformer layer follow Korthikanti et al. 2022 (arXiv 2205.05198) eq. 2:
  ``s·b·h·(34 + 5·a·s/h)`` bytes with 16-bit activations; tensor parallel with sequence parallel
  divides it by t; FlashAttention (and selective recompute) drops the ``5·a·s²·b`` score term; full
  recompute stores only the layer input (2·s·b·h) plus one layer's working set.  With 1F1B pipeline
  parallel the first stage holds about L layers' worth, so pipeline parallel does not divide it.
- Those 34 and 5 include dropout (Korthikanti s4.1): a 1-byte mask after the attention output
  projection (s·b·h) and after the MLP (s·b·h), and on the attention probabilities a 1-byte mask
  (a·s²·b) plus the dropped-out copy the value matmul reads (2·a·s²·b).  A model trained without
  dropout stores ``s·b·h·(32 + 2·a·s/h)``: the softmax output is then the value matmul's input.
  FlashAttention regenerates its dropout mask from the saved RNG state (Dao et al. 2022,
  Algorithm 2), so with it only the two s·b·h masks differ.
- Attention wider (or narrower) than the hidden size: of the 34, the query and key the score
  matmul keeps (4·s·b·h), the values (2·s·b·h) and the attention output the output projection
  reads (2·s·b·h) -- 8 -- are as wide as the attention, ``heads x head_dim`` (Korthikanti s4.1:
  "QKᵀ ... 4sbh", "the Values (2sbh)", the linear projection's "input activations with size
  2sbh"); the QKV projection's input, the layer norms, the MLP and the dropout masks are
  hidden-wide.  A model of attention width ``w`` stores ``26·s·b·h + 8·s·b·w`` (32 -> ``24 +
  8·w/h`` without dropout).  Keys and values are counted at the queries' width, as in the
  multi-head count (grouped-query attention's narrower K and V are not subtracted).
- The MLP's width and kind (``model.ffn``, ``model.mlp``).  Korthikanti's MLP values (18 of the
  32) are those of a plain MLP four hidden sizes wide: its input (2), the GeLU's input and the
  second linear layer's input (2 bytes per f each): ``2 + 4·f/h``.  A gated MLP (SwiGLU: Llama,
  Mistral, Qwen; ``down(silu(gate(x)) * up(x))``) run as separate kernels -- transformers'
  ``LlamaMLP``, torchtune's ``FeedForward``, LitGPT's ``LLaMAMLP`` -- keeps the gate output (SiLU's
  input), the up output and the SiLU output (the product's inputs) and their product (the down
  projection's input): ``2 + 8·f/h`` (23.5 for Llama 2 7B's f = 11,008 of h = 4,096).  A fused
  SwiGLU (Megatron's ``bias_swiglu_fusion``, Transformer Engine; compiled graphs) keeps the first
  linear layer's output (gate and up, 4 bytes per f) and recomputes the SiLU and the product in the
  backward pass, keeping only the down projection's input: ``2 + 6·f/h`` (18.1),
  :func:`expert_bytes_per_sbh`.
- Norms: Korthikanti counts each of the two layer norms' 16-bit inputs (2 each).  The eager RMSNorm
  of a Llama-style model upcasts its input to fp32 before squaring it (transformers'
  ``LlamaRMSNorm``: ``hidden_states.to(torch.float32)``; torchtune's ``RMSNorm``: ``x.float()``;
  LitGPT's ``RMSNorm``: ``x.float()``), and autograd keeps that fp32 copy for the backward pass: 4
  bytes each, 4 more per layer.  A fused norm (Transformer Engine, Apex, compiled) keeps the 16-bit
  input and one fp32 statistic per token.  So an eager Llama 2 7B layer stores 32 - 18 + 23.5 + 4
  = 41.5 bytes per s·b·h without dropout, a fused one 32.1.
- Output logits in fp32 plus their softmax: ``b·s·V·4·2`` bytes (vram.asmirnov.xyz), over t.  The
  Hugging Face Trainer's causal-LM loss holds more: transformers' ``*ForCausalLM.forward`` upcasts
  the logits (``logits = logits.float()``), makes a shifted contiguous copy
  (``logits[..., :-1, :].contiguous()``) and ``CrossEntropyLoss`` keeps its log-softmax output for
  the backward pass: three fp32 copies, 12 bytes per logit (:func:`logit_bytes`).  torchtune's
  recipes hold as many: its ``TransformerDecoder`` returns ``self.output(h).float()``, the recipe
  keeps the shifted copy ``logits[..., :-1, :].contiguous()`` in scope through the backward pass and
  ``nn.CrossEntropyLoss`` its log-softmax output, and the loss's backward writes a third fp32
  tensor of the same size beside them (pytorch/torchtune @0217d44c2, torchtune/modules/
  transformer.py and recipes/lora_finetune_single_device.py, full_finetune_distributed.py).
  torchtune's later recipes chunk the loss (``training.chunked_loss``; their configs' ``loss:
  torchtune.modules.loss.CEWithChunkedOutputLoss`` from v0.3, pytorch/torchtune@0031bfb0
  recipes/configs/llama3_1/8B_lora_single_device.yaml): the model returns its 16-bit logits in
  ``num_output_chunks`` = 8 pieces (``TransformerDecoder.chunked_output``, no ``.float()``), and
  the loss upcasts one piece at a time (``F.cross_entropy(logits.float(), ...)`` in
  ``compute_cross_entropy``, "saves memory by only upcasting one chunk at a time";
  torchtune/modules/loss/ce_chunked_output_loss.py at that commit).  Held at the loss's last
  piece: the 16-bit logits (2 bytes; the recipe deletes them only after the loss, "free logits
  otherwise it peaks backward memory"), every piece's fp32 log-softmax kept for the backward pass
  (4) and one piece's fp32 upcast (4/8): 6.5 bytes per logit (:data:`CHUNKED_LOGIT_BYTES`).
  Compiling the loss (torchtune's ``compile: True``) can fuse the upcast away; not modelled.
- Block recompute (Megatron-LM ``--recompute-granularity full --recompute-method block
  --recompute-num-layers k``; torchtitan's per-layer activation checkpointing of every few layers)
  recomputes k of a stage's Ls layers: those keep only their input (2·s·b·h), the others everything,
  a mean of ``(k·2 + (Ls - k)·34)/Ls·s·b·h`` per layer.  Megatron checkpoints the stage's first k
  layers, which the backward pass reaches after the stage's other layers have released this
  micro-batch's activations, so the layer being rebuilt takes a released one's place and, unlike
  full recompute, adds no working set at the peak (k < Ls).
- Under full recompute the logits and the recomputed layer's working set are never live together:
  the loss and the output head's backward run (and free the logits) before the backward pass
  recomputes the last layer, so the stored layer inputs carry the larger of the two, not both.
- Optimizer states offloaded to the host (ZeRO-Offload, ZeRO-Infinity): the 16-bit gradients leave
  the GPU as the backward pass produces them, through one reduction bucket; the GPU keeps the 16-bit
  weights (Ren et al. 2021, s4.1; DeepSpeed's ZeRO-2 estimator charges ``2·Ψ`` on the GPU with
  ``cpu_offload``, deepspeed/runtime/zero/stage_1_and_2.py ``estimate_zero2_model_states_mem_needs``).
- LoRA adapters on every linear layer: ``19·r·h`` parameters per layer (q, k, v, o: 4·2·r·h; a
  gated MLP of width ~2.7h: 3·r·3.7h); on the four attention projections ``8·r·h``; on q and v
  ``4·r·h``; trained with the optimizer's full state; base weights frozen
  in 16 bits, or 4-bit NF4 with double quantisation for QLoRA (4.127 bits; Dettmers et al. 2023).
  QLoRA quantises the linear layers only: transformers' bitsandbytes integration replaces
  ``nn.Linear`` modules (``replace_with_bnb_linear``), so the token embedding (``vocab x hidden``,
  an ``nn.Embedding``) stays in 16 bits -- 2 GiB for Llama 3 70B's 128k x 8,192 -- and so does the
  output head (``get_keys_to_not_convert`` keeps it out): a second such matrix where the model does
  not tie it to the embedding (``model.tied_embeddings``; Llama, Mistral, Mixtral do not)
  (:func:`qlora_frozen_bytes_per_param`).
- NF4 with or without double quantisation (``training.quantization``).  bitsandbytes quantises in
  blocks of 64 values with one fp32 absmax each: 4 + 32/64 = 4.5 bits a weight (``nf4``); double
  quantisation stores the absmax values in 8 bits, blocks of 256 with an fp32 constant each: 4 +
  8/64 + 32/(64·256) = 4.127 bits (``nf4-dq``; Dettmers et al. 2023 s3: "reduces the memory
  footprint from 32/64 = 0.5 bits, to 8/64 + 32/(64·256) = 0.127 bits").  Lightning's
  ``BitsandbytesPrecision`` maps ``nf4`` to ``Linear4bit(quant_type="nf4",
  compress_statistics=False)`` and ``nf4-dq`` to ``compress_statistics=True``
  (Lightning-AI/pytorch-lightning@003e3070 src/lightning/fabric/plugins/precision/bitsandbytes.py
  ``_NF4Linear``, ``_NF4DQLinear``), and LitGPT's QLoRA configs say ``quantize: bnb.nf4``
  (Lightning-AI/litgpt@00af8b0d config_hub/finetune/{llama-2-7b,llama-3-8b,mistral-7b,gemma-7b}/
  qlora.yaml), so that stack's default is ``nf4``
  (:data:`QLORA_QUANTIZATION_BY_STACK`); the others' QLoRA recipes (the QLoRA paper's, PEFT's
  ``bnb_4bit_use_double_quant=True`` examples) quantise twice.
- The output head quantised with the linear layers.  Lightning's ``BitsandbytesPrecision``
  replaces every ``nn.Linear`` outside ``ignore_modules`` (empty unless given; its docstring
  names ``{"lm_head"}`` as the example to pass), and LitGPT passes none and keeps its output head a
  separate ``nn.Linear`` (Lightning-AI/litgpt@01e39f50 litgpt/lora.py ``GPT.__init__``: ``lm_head =
  LoRALinear(...)``), so under that stack only the token embedding stays in 16 bits and the head
  is in NF4 whatever ``model.tied_embeddings`` says (:data:`HEAD_QUANTISING_STACKS`).
  bitsandbytes multiplies by a quantised weight through a 16-bit copy it dequantises for the
  matmul, forward (``F.dequantize_4bit(B, quant_state).to(A.dtype)``) and backward
  (``grad_A = torch.matmul(grad_output, F.dequantize_4bit(B, ctx.state)...)``;
  bitsandbytes-foundation/bitsandbytes@60a0d8a5 bitsandbytes/autograd/_functions.py
  ``MatMul4Bit``).  A layer's copy is one layer's weights, but the head's, ``vocab x hidden`` in 16
  bits (1.46 GiB for Gemma's 256,000 x 3,072), is made while every layer's activations are held,
  at the end of the forward pass and again at the start of the backward pass, so it counts at the
  peak (:func:`head_dequant_bytes`).
- LoRA dropout (``training.lora_dropout``).  The adapter's branch runs ``lora_B(lora_A(dropout(x)))``
  beside the frozen layer: with a dropout probability above 0 the dropped copy of the layer's
  input is a new tensor the ``lora_A`` matmul keeps for its weight gradient, and ``nn.Dropout``
  keeps its 1-byte mask; with 0, PEFT and LitGPT put an identity in its place, and ``lora_A``
  keeps ``x`` itself.  A frozen 16-bit linear layer keeps no input of its own: PyTorch's autograd
  saves a matmul's input only for the weight's gradient, and only when the weight requires one
  (pytorch/pytorch@9e69e821 tools/autograd/gen_variable_type.py ``guard_for``: "We don't want to
  save tensors if we know that they will never be used"), so with dropout the copies take the
  place of the input the layer's count holds: per adapted module 2 + 1 bytes per input value,
  less the 2 of each distinct input.  bitsandbytes' ``MatMul4Bit`` kept its input on ``ctx``
  whatever needed it (``ctx.tensors = (A, B)``) until 0.43.2 (bitsandbytes-foundation/
  bitsandbytes@9e753741, 2024-07, "fix QLoRA mem bug: delete useless buffered activation
  (#1270)": ``(None, B)``); the published QLoRA measurements ran before it (LitGPT pinned
  ``bitsandbytes==0.42.0``, Lightning-AI/litgpt@e5493986 pyproject.toml, when its config-hub
  QLoRA peaks were tabled), so under QLoRA every quantised layer's input is counted, as the layer
  count does, and the copies come on top (a later bitsandbytes stores as 16-bit LoRA does)
  (huggingface/peft@00336949 src/peft/tuners/lora/layer.py ``update_layer``: ``nn.Dropout(p=
  lora_dropout)`` if ``lora_dropout > 0.0`` else ``nn.Identity()``; Lightning-AI/litgpt@01e39f50
  litgpt/lora.py ``LoRALayer``: ``lambda x: x``).  PEFT and torchtune adapt q, k and v as separate
  modules, each with its own dropout; LitGPT's fused QKV layer (``LoRAQKVLinear``) drops its input
  once for all three (:data:`FUSED_QKV_LORA_STACKS`).  Defaults: PEFT's ``LoraConfig`` 0.0;
  LitGPT's 0.05 (Lightning-AI/litgpt@00af8b0d litgpt/finetune/lora.py ``lora_dropout: float =
  0.05``, its llama, mistral and phi-2 configs the same, the gemma-7b ones 0.1; lit-gpt@8641822
  finetune/lora.py ``lora_dropout = 0.05``) (:data:`LORA_DROPOUT_BY_STACK`).  Under full recompute the copies are
  rebuilt with the layer and are not stored (:func:`lora_dropout_bytes_per_sb`).
- DeepSpeed's fp16 optimizer without ZeRO (``FP16_Optimizer``, deepspeed/runtime/fp16/
  fused_optimizer.py ``step``) casts every 16-bit gradient to fp32 (``p.grad.to(data_type) for p
  in group``) and concatenates the copies into one flat fp32 gradient (``_flatten_dense_tensors``)
  for the master weights: for that moment the per-parameter copies and the flat buffer, 8 bytes
  per parameter, sit beside the model states.  The activations are freed by then, so the step's
  peak is the states plus those 8 bytes, the backward pass's the states plus the activations; the
  larger counts (:func:`fp16_optimizer_step_bytes`).  ZeRO's optimizer casts only its partition.
- Gradient accumulation under FSDP's ``no_sync`` (the ``lightning`` stack: Lightning Fabric and
  LitGPT on it).  Sharded gradients (ZeRO-2, ZeRO-3 / FSDP full shard) are the shard a
  reduce-scatter leaves each rank, but a micro-batch whose gradients are not synchronised has
  nothing to reduce-scatter: PyTorch's ``FullyShardedDataParallel.no_sync`` "likely results in
  higher memory usage because FSDP will accumulate the full model gradients (instead of gradient
  shards) until the eventual sync" (torch/distributed/fsdp/fully_sharded_data_parallel.py,
  ``no_sync`` docstring).  Lightning Fabric's ``no_backward_sync`` under its FSDPStrategy returns
  ``module.no_sync()`` (lightning/fabric/strategies/fsdp.py, ``_FSDPBackwardSyncControl``), and
  LitGPT's full fine-tune wraps every accumulating micro-batch in it (litgpt/finetune/full.py
  @00af8b0d: ``with fabric.no_backward_sync(model, enabled=is_accumulating)``).  So with more than
  one micro-batch per step each rank holds its whole (tensor x pipeline split) gradients through
  the step's backward passes, the last one included, whose reduce-scatter then leaves the shard:
  ``full - shard`` bytes more than ZeRO's count (:func:`unsynced_gradient_bytes`).  DeepSpeed's
  ZeRO-2/3 reduce every micro-batch's gradients into the partition as the backward pass makes
  them and keeps no unsharded copy; Megatron's distributed optimizer keeps a full gradient buffer
  of its own already (ZeRO-1); torchtitan's FSDP2 loop (and ``pytorch-fsdp``, eager FSDP as
  torchtitan runs it) reduce-scatters every micro-batch's gradients (FSDP2 syncs unless told
  ``set_requires_gradient_sync(False)``), and so does the PyTorch Lightning Trainer, whose
  ``block_backward_sync`` blocks a DistributedDataParallel model's sync only
  (lightning/pytorch/strategies/parallel.py; its FSDPStrategy keeps it): ``pytorch-lightning`` is
  ``pytorch-fsdp``.
- Eager ``torch.autocast`` (the ``fp16``/``bf16`` recipe of a stack whose profile says
  ``autocast``: the Hugging Face Trainer and eager DDP; frameworks.yaml) keeps the model in fp32
  and casts inside each operation.  With plain data parallel (ZeRO 0; DeepSpeed's engine and FSDP's
  mixed precision hold 16-bit weights of their own, transformers' Trainer: "deepspeed ... manage
  their own half precision") that changes three things (:func:`autocast_state_bytes`,
  :func:`autocast_cast_params`, :func:`autocast_extra_bytes_per_sbh`,
  :func:`autocast_score_bytes_per_as2b`):

  - the model states are fp32's: weights 4, gradients 4 (autograd accumulates into the fp32
    leaf's dtype) and the optimizer's states with no master copy beside them -- 16 bytes with
    AdamW, as the 2 + 2 + 12 split, so only the split moves;
  - autocast's weight-cast cache: the first operation on autocast's float16 list (linear, matmul,
    addmm, bmm, conv ...) that reads an fp32 weight which requires grad casts it to 16 bits and
    caches the copy "to streamline parameter reuse" (pytorch/pytorch aten/src/ATen/
    autocast_mode.cpp, ``cached_cast``: ``arg.requires_grad() && arg.is_leaf()``).  The cache is
    cleared when the autocast region exits, "at the end of each forward pass", but the matmul has
    saved its 16-bit operand for the backward pass (the casts "precede autograd history recording,
    so that for fp16 ops, input tensors are saved for backward in fp16"), so every copy lives until
    its layer's backward pass: 2 bytes per cast parameter at the peak, the "6 bytes * number of
    parameters for mixed precision training (maintains a model in fp32 and one in fp16 in
    memory)" of transformers' model memory anatomy doc.  The token embedding is not cast
    (``embedding`` is on no autocast list) unless it is also the output head's matmul weight;
  - the operations on autocast's float32 list run, and save, in fp32 (PyTorch AMP docs, "CUDA Ops
    that can autocast to float32": ``layer_norm``, ``softmax``, ``log_softmax``, the losses; GeLU
    is on neither list and runs in 16 bits): each norm keeps an fp32 input, 2 bytes more per s·b·h
    each, 4 a layer (an eager RMSNorm's fp32 copy already counts them); and without a fused
    attention kernel the softmax keeps its fp32 output, which the value matmul reads through a
    16-bit cast it saves itself: per a·s²·b 4 + the dropout mask 1 + the cast 2 = 7 with dropout,
    4 + 2 = 6 without, against 5 and 2 in 16 bits.  Unmodelled: a linear layer that reads an fp32
    tensor saves its own 16-bit cast of it, so separate q, k and v projections after an fp32 norm
    output keep three copies where a fused QKV keeps one (the workload does not say which a model
    has), and the fp32 layer inputs that gradient checkpointing keeps (2·s·b·h more a layer).
- Framework: 1 GiB for the CUDA context, cuBLAS workspaces and NCCL buffers (vram.asmirnov.xyz counts
  0.3-2 GiB) plus 5% of everything else for caching-allocator fragmentation.
- KV cache: ``2·L·kv_heads·head_dim·bytes`` per token of context (``head_dim`` = h/heads unless
  the model says otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass

GIB = float(2**30)

# The training recipes whose linear layers run below 16 bits (Transformer Engine's fp8 and NVFP4
# recipes): both keep the linear layers' inputs for the backward pass in their low-bit form and
# everything else in 16 bits.  NVFP4 (``fp4``) keeps each such input at 4.5 bits a value (e2m1 and
# an e4m3 scale per 16) twice, row-wise for the input gradient and as the Hadamard-transformed
# column-wise copy the weight gradient reads (Transformer Engine's NVFP4 recipe): 1.125 bytes, about
# fp8's one, and counted as fp8's (U).
LOW_BIT_RECIPES = ("fp8", "fp4")

# Bytes per stored value by precision name.
BYTES_PER_VALUE: dict[str, float] = {
    "fp32": 4.0,
    "fp16": 2.0,
    "bf16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
}

# Optimizer state bytes per trainable parameter, excluding any fp32 master copy (see module doc).
OPTIMIZER_STATE_BYTES: dict[str, float] = {
    "adamw": 8.0,
    "adamw-8bit": 2.0,
    "paged-adamw": 8.0,
    "paged-adamw-8bit": 2.0,
    "lion": 4.0,
    "sgd": 4.0,
    "adafactor": 0.0,
}

# bitsandbytes optimizers: states at their own width (fp32 or 8-bit) whatever the parameters' dtype.
BNB_OPTIMIZERS = frozenset({"adamw-8bit", "paged-adamw", "paged-adamw-8bit"})
# Of those, the paged ones: states in CUDA unified memory, spilled to host RAM under pressure.
PAGED_OPTIMIZERS = frozenset({"paged-adamw", "paged-adamw-8bit"})

# Optimizer states offloaded to host RAM (training.offload: optimizer): ZeRO-Offload keeps the fp32
# master weights and both Adam moments there, 12 bytes per parameter (Ren et al. 2021,
# "ZeRO-Offload: Democratizing Billion-Scale Model Training", s4).
OFFLOAD_HOST_BYTES_PER_PARAM = 12.0
# Optimizer states on local NVMe (training.offload: nvme, DeepSpeed ZeRO-Infinity, Rajbhandari et al.
# 2021): the fp32 master weights and the optimizer's states live in swap files, and so does an fp32
# copy of each gradient, written at the accumulation boundary and read back by the CPU optimizer
# (deepspeed/runtime/zero/stage3.py partition_grads -> optimizer_swapper.swap_out_gradients): 4
# bytes per parameter on top of the states.  Cross-check: a 10B model on two ranks keeps "80G of
# swap files" in the NVMe file system (deepspeedai/DeepSpeedExamples#192), 16 x 5e9 bytes.
NVME_GRADIENT_BYTES_PER_PARAM = 4.0
# Host RAM stages them: DeepSpeed's optimizer swapper holds ``buffer_count`` pinned fp32 buffers
# ("at least the number of states maintained per parameter by the optimizer ... Adam optimizer has 4
# states (parameter, gradient, momentum, and variance)", default 4), each the size of the largest
# sub-group, and the optimizer step walks the rank's states one sub-group of ``sub_group_size``
# elements at a time (default 1e9; DeepSpeed config-json docs, offload_optimizer and
# zero_optimization.sub_group_size).  So a rank stages 4 x 4 bytes x min(1e9, its parameters).
NVME_SWAP_BUFFERS = 4
NVME_SUB_GROUP_PARAMS = 1e9
# NF4 with double quantisation: 4 bits + 0.127 bits of constants per parameter (QLoRA paper, s3).
QLORA_BYTES_PER_PARAM = 4.127 / 8
# Bytes per quantised weight by ``training.quantization`` (module doc): bitsandbytes' NF4 with one
# fp32 absmax per 64-value block, 4 + 32/64 bits, and with those absmax values quantised again
# (QLoRA paper s3).
NF4_BYTES_PER_PARAM = {"nf4": 4.5 / 8, "nf4-dq": QLORA_BYTES_PER_PARAM}
# The quantisation a stack's QLoRA recipes use where the workload does not say (module doc); every
# other stack: nf4-dq.
QLORA_QUANTIZATION_BY_STACK = {"lightning": "nf4"}
DEFAULT_QLORA_QUANTIZATION = "nf4-dq"
# The stacks whose QLoRA quantises the output head with the other linear layers (module doc).
HEAD_QUANTISING_STACKS = frozenset({"lightning"})
# LoRA dropout where the workload does not say (module doc): LitGPT's finetune/lora.py default;
# every other stack PEFT's LoraConfig default, 0.
LORA_DROPOUT_BY_STACK = {"lightning": 0.05}
DEFAULT_LORA_DROPOUT = 0.0
# The stacks whose LoRA drops the fused QKV layer's input once for q, k and v (module doc).
FUSED_QKV_LORA_STACKS = frozenset({"lightning"})
# nn.Dropout's mask, 1 byte (bool) per value, kept beside the dropped copy (module doc).
DROPOUT_MASK_BYTES_PER_VALUE = 1.0
# LoRA parameters per layer per unit of rank·hidden (see module doc).
LORA_PARAMS_PER_RANK_HIDDEN = 19.0
# The same per target set (``training.lora_targets``).
LORA_PARAMS_BY_TARGETS = {"all-linear": 19.0, "attention": 8.0, "qv": 4.0}
# Bytes per output logit at the loss (see module doc): fp32 logits and their softmax; the Hugging Face
# causal-LM loss: the fp32 upcast, its shifted contiguous copy and the log-softmax output.
LOGIT_BYTES = 8.0
HF_LOGIT_BYTES = 12.0
# The stacks that hold three fp32 copies of the logits at the loss, the Hugging Face causal-LM loss
# and torchtune's recipes (planner/data/frameworks.yaml names; module doc).
HF_LOSS_STACKS = frozenset({"hf-trainer", "torchtune"})
# torchtune's CEWithChunkedOutputLoss (module doc): the 16-bit logits 2, each piece's fp32
# log-softmax 4, one of CHUNKED_LOSS_PIECES pieces' fp32 upcast 4.
CHUNKED_LOSS_PIECES = 8
CHUNKED_LOGIT_BYTES = 2.0 + 4.0 + 4.0 / CHUNKED_LOSS_PIECES
# The stacks whose recipes offer that loss (training.chunked_loss).
CHUNKED_LOSS_STACKS = frozenset({"torchtune"})
# Gradients on the GPU under offloaded optimizer states: one reduction bucket of 16-bit values,
# DeepSpeed's ``reduce_bucket_size`` default of 5e8 elements (DeepSpeed config-json docs).
OFFLOAD_GRADIENT_BUCKET_BYTES = 5e8 * 2.0
# DeepSpeed's non-ZeRO fp16 optimizer at the step: the fp32 copies of the 16-bit gradients and
# their flat concatenation, 4 bytes per parameter each (module doc).
FP16_OPTIMIZER_STEP_BYTES_PER_PARAM = 8.0
# The stacks whose non-ZeRO fp16 optimizer does so (planner/data/frameworks.yaml names).
FP16_STEP_COPY_STACKS = frozenset({"deepspeed"})
# The stacks that accumulate gradients over micro-batches under FSDP's no_sync, keeping them unsharded
# until the step's last micro-batch (module doc; planner/data/frameworks.yaml names).
NO_SYNC_ACCUMULATION_STACKS = frozenset({"lightning"})
# The stacks whose FSDP units mix a LoRA job's frozen weights with its adapters: Lightning Fabric's
# FSDPStrategy sets ``use_orig_params=True`` (lightning @71aed751, fabric/strategies/fsdp.py) and
# LitGPT wraps each transformer Block, adapters and all (finetune/lora.py @8641822:
# ``auto_wrap_policy={Block}``).  PyTorch then keeps gradients for the frozen weights too: "the
# gradient memory usage will be higher than expected (namely, equivalent to not freezing those
# parameters)" (torch.distributed.fsdp.FullyShardedDataParallel docstring, PyTorch 2.1), held
# unsharded under no_sync while micro-batches accumulate.  LitGPT's resource table shows it: Llama 2
# 13B LoRA at micro-batch 1 takes 38.12 GB on one A100 40GB and runs out of memory on two under
# FSDP, 35.57 GB a GPU on four (tutorials/resource-tables.md @4839345a).  PEFT's FSDP recipes wrap
# the adapters apart (accelerate's fsdp_auto_wrap_policy for PEFT) and FSDP2 shards per parameter,
# so they keep the frozen weights without gradients.
FROZEN_GRADIENT_FSDP_STACKS = frozenset({"lightning"})
# Eager torch.autocast (module doc): the 16-bit copy autocast makes of each fp32 weight it casts,
# held from the forward pass to the layer's backward pass; the stored softmax bytes per a·s²·b (fp32
# output 4, the value matmul's 16-bit cast 2, the dropout mask 1).
AUTOCAST_COPY_BYTES_PER_PARAM = 2.0
AUTOCAST_SOFTMAX_BYTES_PER_AS2B = 4.0 + 2.0
SCORE_MASK_BYTES_PER_AS2B = 1.0
# Framework term (see module doc).
FRAMEWORK_FIXED_GIB = 1.0
FRAGMENTATION = 0.05

# Stored bytes per s·b·h of one transformer layer (Korthikanti et al. 2022 eq. 1-2, see module doc):
# 34 with dropout; the attention-output and MLP dropout masks are 1 byte each.
LAYER_BYTES_PER_SBH = 34.0
DROPOUT_MASK_BYTES_PER_SBH = 2.0
# Of those, replicated over the tensor-parallel ranks without sequence parallelism (eq. 3): the two
# layer-norm inputs (4), the two linear-layer inputs that follow them (4) and the two dropout masks.
REPLICATED_BYTES_PER_SBH = 10.0
# Attention scores per a·s²·b without FlashAttention: softmax output 2, dropout mask 1, dropout
# output 2 (eq. 1); without dropout only the softmax output stays.
SCORE_BYTES_PER_AS2B = 5.0
SCORE_DROPOUT_BYTES_PER_AS2B = 3.0
# Of Korthikanti's 34, those as wide as the attention (heads x head_dim), not the hidden size: the
# query and key (4), the values (2) and the attention output (2) (module doc); under fp8 the
# attention output, the output projection's input, is kept in fp8 (1 fewer).
ATTENTION_WIDTH_BYTES_PER_SBH = 8.0
FP8_ATTENTION_INPUT_SAVING_PER_SBH = 1.0
# Of Korthikanti's 34, the MLP block's (the first linear layer's input 2, the GeLU's input 8, the
# second linear layer's input 8, the dropout mask 1).  A mixture of experts stores, in place of the
# values (18), each routed expert's own for every token it receives (:func:`expert_bytes_per_sbh`).
MLP_BYTES_PER_SBH = 19.0
MLP_VALUE_BYTES_PER_SBH = 18.0
# A plain MLP's values per s·b·h are ``MLP_INPUT_BYTES_PER_SBH + 4·f/h`` (module doc); a gated one run as
# separate kernels ``+ 8·f/h``.
MLP_INPUT_BYTES_PER_SBH = 2.0
PLAIN_MLP_BYTES_PER_SBF = 4.0
EAGER_GATED_MLP_BYTES_PER_SBF = 8.0
# Of a layer's 16-bit values, its two norms' inputs (2 each); an eager RMSNorm keeps them in fp32
# (module doc): 2 more each.
NORMS_PER_LAYER = 2
FP32_NORM_EXTRA_BYTES_PER_SBH = 2.0
# Of the fp8 saving, the MLP's: its up-projection input (1) and down-projection input (4).
FP8_MLP_INPUT_SAVING_PER_SBH = 5.0
# Linear-layer inputs stored in fp8 instead of 16 bits under Transformer Engine, per s·b·h: the QKV,
# projection and MLP-up inputs (2 bytes each) and the MLP-down input (8) halve.
FP8_LINEAR_INPUT_SAVING_PER_SBH = 7.0


@dataclass(frozen=True)
class StateBytes:
    """Bytes per trainable parameter held for weights, gradients and optimizer states."""

    weights: float
    grads: float
    optimizer: float

    @property
    def total(self) -> float:
        return self.weights + self.grads + self.optimizer


def state_bytes(precision: str, optimizer: str) -> StateBytes:
    """Per-parameter model-state bytes for full training (16 for mixed-precision AdamW).

    fp32 and tf32 keep fp32 weights and gradients (no master copy); ``pure-bf16`` keeps bf16
    weights, gradients and optimizer states, no fp32 copy (torchtune's default recipe: 8 bytes per
    parameter with AdamW; bitsandbytes' states keep their width: 8-bit stay 8-bit, the paged 32-bit
    AdamW's stay fp32, 8 bytes)."""
    states = OPTIMIZER_STATE_BYTES[optimizer]
    if precision in ("fp32", "tf32"):
        return StateBytes(4.0, 4.0, states)
    if precision == "pure-bf16":
        return StateBytes(2.0, 2.0, states if optimizer in BNB_OPTIMIZERS else states / 2.0)
    # fp16 / bf16 / fp8 compute keep 16-bit weights and grads plus an fp32 master copy
    # (FP8 training keeps higher-precision weights too: Transformer Engine docs).
    return StateBytes(2.0, 2.0, 4.0 + states)


def paged_state_bytes(optimizer: str) -> float:
    """Bytes per trainable parameter a paged optimizer keeps in unified memory (its moments at
    their own width: 8 for paged 32-bit AdamW, 2 for paged 8-bit); 0 for any other optimizer.

    bitsandbytes pages only tensors of 1e5 elements or more (``get_state_buffer``): the states of
    layer norms and biases stay ordinary GPU tensors, a share too small to count here."""
    return OPTIMIZER_STATE_BYTES[optimizer] if optimizer in PAGED_OPTIMIZERS else 0.0


def paged_spill_bytes(paged_bytes: float, spare_bytes: float) -> float:
    """Bytes of a paged optimizer's states evicted to host RAM: what does not fit in the GPU memory
    left over (``spare_bytes``) once everything that must stay resident is placed.  The CUDA
    driver keeps pages on the GPU while it has room and evicts the rest (see module doc)."""
    return max(0.0, paged_bytes - max(0.0, spare_bytes))


def nvme_state_bytes_per_param(state: StateBytes) -> float:
    """Bytes per trainable parameter in the NVMe swap files under ``offload: nvme``: the optimizer
    states with their fp32 master copy, plus the fp32 gradient (16 for mixed-precision AdamW)."""
    return state.optimizer + NVME_GRADIENT_BYTES_PER_PARAM


def nvme_staging_bytes(rank_params: float) -> float:
    """Host RAM one rank pins to stage its optimizer states to and from NVMe: DeepSpeed's
    :data:`NVME_SWAP_BUFFERS` fp32 buffers of one sub-group each (see the constants)."""
    return NVME_SWAP_BUFFERS * 4.0 * min(NVME_SUB_GROUP_PARAMS, max(rank_params, 0.0))


def qlora_frozen_bytes_per_param(
    frozen_params: float,
    vocab: int,
    hidden: int,
    *,
    tied: bool = True,
    head_quantised: bool = False,
    quantization: str = DEFAULT_QLORA_QUANTIZATION,
) -> float:
    """Mean bytes per frozen parameter under QLoRA: NF4 (``quantization``: ``nf4`` or ``nf4-dq``)
    for the linear layers, 16 bits for the token embedding's ``vocab x hidden`` and, unless
    ``tied`` to it or ``head_quantised`` with the linear layers, the output head's (see module
    doc)."""
    per_weight = NF4_BYTES_PER_PARAM[quantization]
    if frozen_params <= 0:
        return per_weight
    embedding = min(frozen_params, float(vocab) * hidden * (1 if (tied or head_quantised) else 2))
    quantised = frozen_params - embedding
    return (quantised * per_weight + embedding * 2.0) / frozen_params


def qlora_quantization(stack: str | None, given: str | None = None) -> str:
    """The NF4 variant QLoRA uses: ``given`` (``training.quantization``) or ``stack``'s default."""
    if given is not None:
        return given
    return QLORA_QUANTIZATION_BY_STACK.get(stack or "", DEFAULT_QLORA_QUANTIZATION)


def lora_dropout(stack: str | None, given: float | None = None) -> float:
    """The LoRA dropout probability: ``given`` (``training.lora_dropout``) or ``stack``'s default."""
    if given is not None:
        return given
    return LORA_DROPOUT_BY_STACK.get(stack or "", DEFAULT_LORA_DROPOUT)


def head_dequant_bytes(vocab: int, hidden: int, *, tp: int = 1) -> float:
    """The 16-bit copy bitsandbytes dequantises a quantised output head into for its matmul, held
    beside every layer's activations (module doc): ``vocab x hidden x 2`` bytes, over ``tp``."""
    return float(vocab) * hidden * 2.0 / tp


def lora_dropout_input_widths(
    *,
    targets: str,
    hidden: float,
    attention_width: float,
    mlp_width: float,
    gated: bool,
    fused_qkv: bool,
    experts_per_token: int = 1,
) -> tuple[float, float]:
    """(summed input widths of the dropped copies one layer keeps under LoRA dropout, summed widths
    of the distinct inputs they are copies of) (module doc).  Copies: the query, key and value
    projections' input (once where the stack fuses them, else once per adapted projection), the
    attention output projection's (``attention_width``), and the MLP's: a gated MLP's gate and up
    projections take the hidden size each, the down projection ``mlp_width`` (the routed experts'
    summed width under a mixture of experts).  Inputs: the attention block's, the output
    projection's, the MLP's and the down projection's, one each."""
    if targets == "qv":
        return hidden * (1.0 if fused_qkv else 2.0), hidden
    copies = hidden * (1.0 if fused_qkv else 3.0) + attention_width
    inputs = hidden + attention_width
    if targets == "attention":
        return copies, inputs
    ups = (2.0 if gated else 1.0) * hidden * experts_per_token
    return copies + ups + mlp_width, inputs + hidden * experts_per_token + mlp_width


def lora_dropout_bytes_per_sb(
    copies_width: float, inputs_width: float, precision: str = "bf16", *, inputs_kept: bool = False
) -> float:
    """Bytes one layer stores per token for its LoRA dropout beyond the layer's counted values
    (module doc): each dropped copy at the training precision's width and its 1-byte mask, less
    the inputs themselves, which the count holds once and which only the adapters' ``lora_A`` keep
    for a frozen 16-bit layer -- unless ``inputs_kept`` (QLoRA's bitsandbytes layers before 0.43.2
    keep them)."""
    value = 4.0 if precision in ("fp32", "tf32") else 2.0  # fp8 recipes keep 16-bit activations
    freed = 0.0 if inputs_kept else inputs_width * value
    return copies_width * (value + DROPOUT_MASK_BYTES_PER_VALUE) - freed


def lora_params(layers: int, hidden: int, rank: int, targets: str = "all-linear") -> float:
    """Trainable LoRA parameters with adapters on every linear layer."""
    return LORA_PARAMS_BY_TARGETS[targets] * rank * hidden * layers


def attention_bytes_per_sbh(precision: str = "bf16") -> float:
    """Of a layer's stored bytes per s·b·h, those that scale with the attention width (Q, K, V
    and the attention output: 8; 16 in fp32 and tf32; 7 under fp8, whose output-projection input
    is kept in fp8)."""
    if precision in ("fp32", "tf32"):
        return 2.0 * ATTENTION_WIDTH_BYTES_PER_SBH
    if precision in LOW_BIT_RECIPES:
        return ATTENTION_WIDTH_BYTES_PER_SBH - FP8_ATTENTION_INPUT_SAVING_PER_SBH
    return ATTENTION_WIDTH_BYTES_PER_SBH


def dense_mlp_bytes_per_sbh(precision: str = "bf16") -> float:
    """Korthikanti's MLP values per s·b·h (a plain MLP four hidden sizes wide, dropout mask aside):
    18; 36 in fp32 and tf32; 13 under fp8, whose two linear inputs are kept in fp8."""
    if precision in ("fp32", "tf32"):
        return 2.0 * MLP_VALUE_BYTES_PER_SBH
    if precision in LOW_BIT_RECIPES:
        return MLP_VALUE_BYTES_PER_SBH - FP8_MLP_INPUT_SAVING_PER_SBH
    return MLP_VALUE_BYTES_PER_SBH


def mlp_bytes_per_sbh(
    ffn_per_hidden: float, *, gated: bool, fused: bool = True, precision: str = "bf16"
) -> float:
    """Stored bytes per s·b·h of an MLP ``ffn_per_hidden`` hidden sizes wide (module doc).

    Plain (GeLU): ``2 + 4·f/h`` (18 at 4·h, Korthikanti's count).  Gated (SwiGLU) in fused
    kernels: ``2 + 6·f/h`` (:func:`expert_bytes_per_sbh`); in separate eager kernels, which keep the
    gate, up and SiLU outputs and their product: ``2 + 8·f/h``.  fp32 and tf32 double every value;
    under fp8 the input and the down projection's input are kept in fp8 (1 byte fewer each per h
    and per f)."""
    if gated and fused:
        return expert_bytes_per_sbh(ffn_per_hidden, precision=precision)
    per_f = EAGER_GATED_MLP_BYTES_PER_SBF if gated else PLAIN_MLP_BYTES_PER_SBF
    if precision in ("fp32", "tf32"):
        return 2.0 * (MLP_INPUT_BYTES_PER_SBH + per_f * ffn_per_hidden)
    if precision in LOW_BIT_RECIPES:
        return MLP_INPUT_BYTES_PER_SBH - 1.0 + (per_f - 1.0) * ffn_per_hidden
    return MLP_INPUT_BYTES_PER_SBH + per_f * ffn_per_hidden


def fp32_norm_bytes_per_sbh(precision: str = "bf16") -> float:
    """What an eager RMSNorm's fp32 copies of the two norms' inputs add per s·b·h over their 16-bit
    count: 4 (module doc); none in fp32 and tf32, whose inputs are fp32 already."""
    if precision in ("fp32", "tf32"):
        return 0.0
    return NORMS_PER_LAYER * FP32_NORM_EXTRA_BYTES_PER_SBH


def replicated_bytes_per_sbh(
    *, dropout: bool, precision: str = "bf16", norm_extra_bytes: float = 0.0
) -> float:
    """Of one layer's stored bytes per s·b·h, those tensor parallelism without sequence parallelism
    leaves whole on every rank (Korthikanti et al. 2022 eq. 3): the two norms' inputs and the
    linear-layer inputs after them (four 16-bit values, 8 bytes) and the two dropout masks (2).
    fp32 and tf32 double the values; under fp8 the QKV and MLP-up inputs are kept in fp8 (2
    fewer); an eager RMSNorm's fp32 copies of its inputs (``norm_extra_bytes``,
    :func:`fp32_norm_bytes_per_sbh`) stay whole too."""
    masks = DROPOUT_MASK_BYTES_PER_SBH if dropout else 0.0
    values = REPLICATED_BYTES_PER_SBH - DROPOUT_MASK_BYTES_PER_SBH
    if precision in ("fp32", "tf32"):
        values *= 2.0
    elif precision in LOW_BIT_RECIPES:
        values -= FP8_REPLICATED_INPUT_SAVING_PER_SBH
    return values + masks + norm_extra_bytes


# Of FP8_LINEAR_INPUT_SAVING_PER_SBH, the two inputs that follow a norm (QKV and MLP up, 1 each).
FP8_REPLICATED_INPUT_SAVING_PER_SBH = 2.0


def layer_bytes_per_sbh(
    *,
    dropout: bool,
    precision: str = "bf16",
    attention_ratio: float = 1.0,
    mlp_bytes: float | None = None,
    norm_extra_bytes: float = 0.0,
) -> float:
    """Stored bytes per s·b·h of one layer, score term aside: 34 with dropout, 32 without.

    Korthikanti's counts are for 16-bit values with 1-byte dropout masks.  In fp32 and tf32 every
    value takes 4 bytes (66 and 64); under fp8 (Transformer Engine) the inputs of the four linear
    layers are kept in fp8 -- QKV 2, projection 2, MLP up 2 and down 8 bytes halve -- 7 fewer.
    ``attention_ratio`` is the attention width over the hidden size (``heads x head_dim / h``):
    the attention-wide values (:func:`attention_bytes_per_sbh`) scale with it.  ``mlp_bytes``
    (:func:`mlp_bytes_per_sbh`; None: Korthikanti's plain 4·h MLP) replaces the MLP's values and
    ``norm_extra_bytes`` (:func:`fp32_norm_bytes_per_sbh`) adds eager fp32 norm inputs."""
    masks = DROPOUT_MASK_BYTES_PER_SBH if dropout else 0.0
    values = LAYER_BYTES_PER_SBH - DROPOUT_MASK_BYTES_PER_SBH
    wider = (attention_ratio - 1.0) * attention_bytes_per_sbh(precision)
    mlp = 0.0 if mlp_bytes is None else mlp_bytes - dense_mlp_bytes_per_sbh(precision)
    extra = wider + mlp + norm_extra_bytes
    if precision in ("fp32", "tf32"):
        return 2.0 * values + masks + extra
    if precision in LOW_BIT_RECIPES:
        return values + masks - FP8_LINEAR_INPUT_SAVING_PER_SBH + extra
    return values + masks + extra


def expert_bytes_per_sbh(ffn_per_hidden: float, *, precision: str = "bf16") -> float:
    """Stored bytes per s·b·h for each token a routed expert receives, an expert ``ffn_per_hidden``
    hidden sizes wide.

    Korthikanti et al. 2022's MLP count with the expert's width: an expert is a gated MLP (SwiGLU:
    Mixtral, Qwen MoE, DeepSeekMoE, OLMoE, GPT-OSS), so it keeps its input (the permuted token, 2
    bytes per h), the gate and up projections' outputs that the activation's backward needs (2 x
    f values, 4 bytes per f) and the activation's output, the down projection's input (2 bytes per
    f): ``2 + 6·f/h``.  Fine-grained experts (Qwen3-30B-A3B: f = 768 of h = 2,048) store far less
    per routed token than a dense MLP four hidden sizes wide.  Under fp8 (Transformer Engine) the
    two linear inputs are kept in fp8 (``1 + 5·f/h``); fp32 and tf32 double every value.  That is
    a fused SwiGLU's count; eager kernels keep more (:func:`mlp_bytes_per_sbh`)."""
    if precision in ("fp32", "tf32"):
        return 2.0 * (2.0 + 6.0 * ffn_per_hidden)
    if precision in LOW_BIT_RECIPES:
        return 1.0 + 5.0 * ffn_per_hidden
    return 2.0 + 6.0 * ffn_per_hidden


def moe_layer_bytes_per_sbh(
    ffn_per_hidden: float,
    experts_per_token: int,
    *,
    dropout: bool,
    precision: str = "bf16",
    attention_ratio: float = 1.0,
    fused: bool = True,
    norm_extra_bytes: float = 0.0,
) -> float:
    """Stored bytes per s·b·h of one mixture-of-experts layer, score term aside: a dense layer's
    (:func:`layer_bytes_per_sbh`) with its MLP's values replaced by those of the ``experts_per_token``
    experts each token is routed to (:func:`mlp_bytes_per_sbh`, gated; fused unless ``fused`` is
    False)."""
    experts = experts_per_token * mlp_bytes_per_sbh(
        ffn_per_hidden, gated=True, fused=fused, precision=precision
    )
    return layer_bytes_per_sbh(
        dropout=dropout,
        precision=precision,
        attention_ratio=attention_ratio,
        mlp_bytes=experts,
        norm_extra_bytes=norm_extra_bytes,
    )


def score_bytes_per_as2b(*, dropout: bool, precision: str = "bf16") -> float:
    """Stored attention-score bytes per a·s²·b without FlashAttention: 5 with dropout, 2 without
    (the softmax output, the dropout output and its 1-byte mask); 9 and 4 in fp32 and tf32."""
    if precision in ("fp32", "tf32"):
        return 9.0 if dropout else 4.0
    return SCORE_BYTES_PER_AS2B - (0.0 if dropout else SCORE_DROPOUT_BYTES_PER_AS2B)


def activation_bytes_per_layer(
    seq: int,
    micro_batch: float,
    hidden: int,
    heads: int,
    *,
    tp: int = 1,
    recompute: str = "none",
    flash: bool = True,
    sequence_parallel: bool = True,
    dropout: bool = True,
    attention_width: int | None = None,
) -> float:
    """Stored activation bytes of one transformer layer (Korthikanti et al. 2022, eq. 2 and s4).

    With sequence parallelism ``s·b·h·(34 + 5·a·s/h)/t`` (eq. 2 over t; ``32 + 2·a·s/h`` without
    dropout).  Without it the layer norms, the linear inputs after them and the dropout masks stay
    replicated over the t ranks: ``s·b·h·(10 + 24/t + 5·a·s/(h·t))`` (eq. 3; ``8 + 24/t + ...``
    without dropout).  ``attention_width`` (``heads x head_dim``; None: ``hidden``) widens the
    query, key, value and attention-output terms (:func:`layer_bytes_per_sbh`).
    """
    sbh = seq * micro_batch * hidden
    if recompute == "full":
        return 2.0 * sbh / tp
    score = (
        0.0
        if (flash or recompute == "selective")
        else score_bytes_per_as2b(dropout=dropout) * heads * seq * seq * micro_batch
    )
    ratio = (attention_width or hidden) / hidden
    per_sbh = layer_bytes_per_sbh(dropout=dropout, attention_ratio=ratio)
    if not sequence_parallel and tp > 1:
        replicated = replicated_bytes_per_sbh(dropout=dropout)
        return replicated * sbh + (per_sbh - replicated) * sbh / tp + score / tp
    return (per_sbh * sbh + score) / tp


def full_recompute_working_bytes(
    seq: int,
    micro_batch: float,
    hidden: int,
    heads: int,
    *,
    tp: int,
    flash: bool,
    dropout: bool = True,
    attention_width: int | None = None,
) -> float:
    """One layer's activations, rebuilt during the backward pass under full recompute."""
    return activation_bytes_per_layer(
        seq,
        micro_batch,
        hidden,
        heads,
        tp=tp,
        recompute="none",
        flash=flash,
        dropout=dropout,
        attention_width=attention_width,
    )


def block_recompute_bytes_per_layer(
    kept_bytes: float, input_bytes: float, recompute_share: float
) -> float:
    """Mean stored bytes of a stage's layers under block recompute of a share ``recompute_share``
    (k/Ls) of them: ``input_bytes`` (the layer input, 2·s·b·h) for those, ``kept_bytes`` (all of a
    layer's activations) for the rest (module doc)."""
    return recompute_share * input_bytes + (1.0 - recompute_share) * kept_bytes


def logit_bytes(stack: str | None, *, chunked: bool = False) -> float:
    """Bytes per output logit held at the loss by ``stack`` (a framework name), its loss
    ``chunked`` (torchtune's CEWithChunkedOutputLoss) or not (see module doc)."""
    if chunked and stack in CHUNKED_LOSS_STACKS:
        return CHUNKED_LOGIT_BYTES
    return HF_LOGIT_BYTES if stack in HF_LOSS_STACKS else LOGIT_BYTES


def logits_bytes(
    seq: int, micro_batch: float, vocab: int, *, tp: int = 1, bytes_per_logit: float = LOGIT_BYTES
) -> float:
    """The logits and their loss's copies for one micro-batch (vocab-parallel over t): fp32 logits
    and their softmax unless ``bytes_per_logit`` says otherwise (:func:`logit_bytes`)."""
    return seq * micro_batch * vocab * bytes_per_logit / tp


def recompute_peak_bytes(working_bytes: float, logits_bytes: float) -> float:
    """What full recompute adds to the stored layer inputs at the peak: the recomputed layer's
    working set or the logits, whichever is larger -- they are never live together (module doc)."""
    return max(working_bytes, logits_bytes)


def offloaded_gradient_bytes(grads_bytes: float) -> float:
    """GPU bytes of gradients when the optimizer states live on the host: one reduction bucket at
    most, the rest has left for the host as the backward pass produced it (module doc)."""
    return min(grads_bytes, OFFLOAD_GRADIENT_BUCKET_BYTES)


def transformer_activation_bytes(
    *,
    layers: int,
    seq: int,
    micro_batch: float,
    hidden: int,
    heads: int,
    vocab: int,
    tp: int = 1,
    recompute: str = "none",
    flash: bool = True,
    with_logits: bool = True,
    dropout: bool = True,
    attention_width: int | None = None,
) -> float:
    """Activation bytes per GPU for one micro-batch: L layers (1F1B keeps ~L under pipeline) + logits
    (under full recompute: the stored inputs + the larger of one layer's working set and the logits)."""
    per_layer = activation_bytes_per_layer(
        seq,
        micro_batch,
        hidden,
        heads,
        tp=tp,
        recompute=recompute,
        flash=flash,
        dropout=dropout,
        attention_width=attention_width,
    )
    total = layers * per_layer
    logits = logits_bytes(seq, micro_batch, vocab, tp=tp) if (with_logits and vocab) else 0.0
    if recompute == "full":
        working = full_recompute_working_bytes(
            seq,
            micro_batch,
            hidden,
            heads,
            tp=tp,
            flash=flash,
            dropout=dropout,
            attention_width=attention_width,
        )
        return total + recompute_peak_bytes(working, logits)
    return total + logits


def model_state_bytes_per_gpu(
    *,
    params: float,
    trainable_params: float,
    state: StateBytes,
    frozen_bytes_per_param: float,
    tp: int = 1,
    pp: int = 1,
    dp: int = 1,
    zero: int = 0,
) -> tuple[float, float, float]:
    """(weights, gradients, optimizer) bytes per GPU after tensor/pipeline split and ZeRO sharding.

    Full training: ``trainable_params == params`` and ``frozen_bytes_per_param`` is unused.
    LoRA / QLoRA: the ``params - trainable`` frozen weights cost ``frozen_bytes_per_param`` each.
    """
    split = float(tp * pp)
    frozen = max(params - trainable_params, 0.0)
    weights = (frozen * frozen_bytes_per_param + trainable_params * state.weights) / split
    grads = trainable_params * state.grads / split
    optim = trainable_params * state.optimizer / split
    if zero >= 1:
        optim /= dp
    if zero >= 2:
        grads /= dp
    if zero >= 3:
        weights /= dp
    return weights, grads, optim


def fp16_optimizer_step_bytes(
    trainable_params: float, *, stack: str | None, precision: str, zero: int, host_optimizer: bool
) -> float:
    """Bytes held only during the optimizer step, beside the model states, when the activations are
    freed: DeepSpeed's non-ZeRO fp16 optimizer's fp32 gradient copies (module doc); 0 for any other
    stack, precision or ZeRO stage, and where the optimizer runs on the host."""
    if stack not in FP16_STEP_COPY_STACKS or precision != "fp16" or zero != 0 or host_optimizer:
        return 0.0
    return trainable_params * FP16_OPTIMIZER_STEP_BYTES_PER_PARAM


def unsynced_gradient_bytes(
    full_bytes: float, shard_bytes: float, *, stack: str | None, zero: int, accumulation: int
) -> float:
    """Gradient bytes a rank holds beyond its ZeRO shard while FSDP's ``no_sync`` accumulates
    the full gradients (module doc): ``full_bytes - shard_bytes`` on a stack that accumulates so,
    with sharded gradients (ZeRO-2 or 3) and more than one micro-batch per step; 0 otherwise."""
    if stack not in NO_SYNC_ACCUMULATION_STACKS or zero < 2 or accumulation <= 1:
        return 0.0
    return max(0.0, full_bytes - shard_bytes)


def autocast_state_bytes(optimizer: str) -> StateBytes:
    """Per-parameter model-state bytes under eager torch.autocast (module doc): the fp32 model is
    the master copy, so fp32's split -- weights 4, gradients 4, the optimizer's states -- with the
    same total as mixed precision's 2 + 2 + (4 + states)."""
    return state_bytes("fp32", optimizer)


def autocast_cast_params(trainable: float, embedding: float) -> float:
    """Parameters eager torch.autocast casts to 16 bits each forward pass and keeps until the
    backward pass (module doc): the trainable ones but an ``embedding`` table only looked up (0
    where it is also the output head's matmul weight, or is frozen)."""
    return max(trainable - embedding, 0.0)


def autocast_cache_bytes(cast_params: float) -> float:
    """The 16-bit copies of the weights autocast casts: :data:`AUTOCAST_COPY_BYTES_PER_PARAM` each."""
    return cast_params * AUTOCAST_COPY_BYTES_PER_PARAM


def autocast_extra_bytes_per_sbh(*, fp32_norms_counted: bool) -> float:
    """What autocast's fp32 ``layer_norm`` adds per s·b·h to a 16-bit layer's count: the two norm
    inputs in fp32, 4 (module doc); none where an eager RMSNorm's fp32 copies already count them."""
    return 0.0 if fp32_norms_counted else NORMS_PER_LAYER * FP32_NORM_EXTRA_BYTES_PER_SBH


def autocast_score_bytes_per_as2b(*, dropout: bool) -> float:
    """Stored attention-score bytes per a·s²·b without a fused attention kernel under autocast
    (module doc): the fp32 softmax output and the value matmul's 16-bit cast (6), and the dropout
    mask (7)."""
    return AUTOCAST_SOFTMAX_BYTES_PER_AS2B + (SCORE_MASK_BYTES_PER_AS2B if dropout else 0.0)


def framework_bytes(other_bytes: float) -> float:
    """CUDA context + workspaces + allocator fragmentation (see module doc)."""
    return FRAMEWORK_FIXED_GIB * GIB + FRAGMENTATION * other_bytes


def kv_cache_bytes_per_token(
    layers: int,
    hidden: int,
    heads: int,
    kv_heads: int | None,
    bytes_per_value: float,
    *,
    head_dim: float | None = None,
) -> float:
    """KV-cache bytes per token of context (keys and values, every layer): heads of ``head_dim``
    (None: ``hidden / heads``)."""
    width = head_dim or hidden / heads
    return 2.0 * layers * (kv_heads or heads) * width * bytes_per_value


def accelerate_adam_rule_bytes(params: float, bytes_per_value: float) -> float:
    """HF accelerate's ``estimate-memory`` "Training using Adam": 4 x the model size in that dtype."""
    return 4.0 * params * bytes_per_value
