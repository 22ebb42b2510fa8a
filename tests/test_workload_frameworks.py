"""The software stack as an input (issue 14): each framework's kernel efficiency, the layouts it
offers and its compile warm-up, checked against torchtitan's published throughputs."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import planner
from planner.cli import main
from planner.errors import ConfigError
from planner.gpu_specs import resolve_gpu
from planner.workload import efficiency as eff
from planner.workload import estimate, load_workload, parse_workload
from planner.workload.frameworks import load_frameworks

HOUR = 3600.0


def torchtitan_8b(framework: str, precision: str = "bf16") -> planner.WorkloadSpec:
    """torchtitan's Table 1 job: Llama 3.1 8B, global batch 16 x 8,192 tokens, FSDP, selective
    recompute, on 1B tokens."""
    return parse_workload(
        {
            "name": "tt-8b",
            "kind": "pretrain",
            "model": "llama-3-8b",
            "data": {"tokens": 1e9},
            "training": {
                "precision": precision,
                "framework": framework,
                "global_batch_tokens": 16 * 8192,
                "activation_checkpointing": "selective",
                "parallelism": {"zero": 3, "tensor": 1, "pipeline": 1},
            },
        }
    )


def steps_hours(spec: planner.WorkloadSpec, gpu: str = "H100", count: int = 8) -> float:
    return estimate(spec, resolve_gpu(gpu), count).time_breakdown_hours["training steps"]


def test_compile_and_float8_gains_match_torchtitans_table() -> None:
    """torchtitan docs/performance.md Table 1 (8 H100): FSDP 5,762, + torch.compile 6,667, +
    Float8 8,532 tokens/s/GPU: 1.157x and 1.280x.  The model: within 5% of both gains.

    The float8 gain was 1.45x with torchao's dynamic-scaling casts at the full HBM bandwidth; with
    them at the share of it that reproduces the torchao README's single-linear speedup (1.39x at
    M, K, N = 4,096, 8,192, 16,384; not this table) it is 1.265x (issue 14).  It stays below
    Transformer Engine's delayed scaling."""
    eager = steps_hours(torchtitan_8b("pytorch-fsdp"))
    compiled = steps_hours(torchtitan_8b("torchtitan"))
    float8 = steps_hours(torchtitan_8b("torchtitan", "fp8"))
    assert eager / compiled == pytest.approx(6667 / 5762, rel=0.05)
    assert compiled / float8 == pytest.approx(8532 / 6667, rel=0.05)
    delayed = steps_hours(torchtitan_8b("any", "fp8"))  # Transformer Engine stacks
    assert compiled / delayed > compiled / float8  # delayed scaling casts less than dynamic


def test_a_stack_that_cannot_split_layers_never_does() -> None:
    """Llama 2 70B LoRA on 8 H100: the Hugging Face Trainer shards with ZeRO only; NeMo may use
    tensor parallelism, and in fp8 it finishes well before the Trainer in bf16."""
    lora = load_workload("llama-2-70b-lora")
    hf = estimate(planner.with_training(lora, framework="hf-trainer"), resolve_gpu("H100"), 8)
    nemo = planner.with_training(lora, framework="nemo", precision="fp8")
    fast = estimate(nemo, resolve_gpu("H100"), 8)
    assert hf.strategy.tensor_parallel == 1 and hf.strategy.pipeline_parallel == 1
    assert fast.strategy.tensor_parallel > 1
    assert fast.wall_hours < hf.wall_hours / 1.5
    for name, profile in load_frameworks().items():
        if profile.methods is not None and "lora" not in profile.methods:
            # a stack without a LoRA recipe (llm.c) refuses the workload
            with pytest.raises(ConfigError, match="no lora recipe"):
                planner.with_training(lora, framework=name)
            continue
        spec = planner.with_training(lora, framework=name)
        est = estimate(spec, resolve_gpu("H100"), 8)
        if not profile.tensor_parallel:
            assert est.strategy.tensor_parallel == 1, name
        if not profile.pipeline_parallel:
            assert est.strategy.pipeline_parallel == 1, name
        assert est.strategy.zero_stage in profile.zero, name


def test_compiling_stacks_pay_their_warm_up_once() -> None:
    compiled = estimate(torchtitan_8b("torchtitan"), resolve_gpu("H100"), 8)
    eager = estimate(torchtitan_8b("pytorch-fsdp"), resolve_gpu("H100"), 8)
    start = "start-up and model load"
    extra = compiled.time_breakdown_hours[start] - eager.time_breakdown_hours[start]
    assert extra * HOUR == pytest.approx(load_frameworks()["torchtitan"].compile_seconds)
    assert eager.time_breakdown_hours[start] * HOUR == pytest.approx(eff.PROCESS_START_SECONDS)


def test_auto_names_the_stack_it_chose() -> None:
    finetune = estimate(load_workload("gpt2-finetune"), resolve_gpu("A100-80GB"), 1)
    pretrain = estimate(load_workload("gpt2-pretrain"), resolve_gpu("A100-80GB"), 8)
    assert any(
        "software stack: hf-trainer (auto for fine-tuning" in a for a in finetune.assumptions
    )
    assert any("software stack: any (auto for pre-training" in a for a in pretrain.assumptions)
    assert "x0.9 for the hf-trainer software stack" in finetune.efficiency_source


def test_an_unknown_framework_names_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="megatron"):
        planner.with_training(load_workload("gpt2-finetune"), framework="megatrom")
    result = CliRunner().invoke(
        main, ["estimate", "gpt2-finetune", "--gpu", "H100", "--framework", "megatrom"]
    )
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_framework_on_the_command_line_changes_a_named_workload() -> None:
    run = CliRunner().invoke
    args = ["estimate", "llama-2-70b-lora", "--gpu", "H100", "--count", "8", "--format", "json"]
    hf = json.loads(
        run(main, [*args, "--framework", "hf-trainer", "--precision", "amp-bf16"]).stdout
    )
    nemo = json.loads(run(main, [*args, "--framework", "nemo", "--precision", "fp8"]).stdout)
    assert nemo["wall_hours"] < hf["wall_hours"]
    assert any("software stack: nemo (training.framework)" in a for a in nemo["assumptions"])


def test_llm_c_runs_the_matmuls_faster_than_the_calibrated_stacks() -> None:
    """llm.c's factor 1.25 (set from GPT-2 124M on 8 H100 in 45 minutes) divides the matmul time
    only: the GPT-2 steps on 8 H100 shrink, but by less than 1.25x (activation traffic, the
    gradient exchange and the optimizer step stay)."""
    assert load_frameworks()["llm.c"].stack == pytest.approx(1.25)

    def gpt2(framework: str) -> planner.WorkloadSpec:
        return parse_workload(
            {
                "name": "gpt2-llmc",
                "kind": "pretrain",
                "model": "gpt2",
                "data": {"tokens": 1e9},
                "training": {
                    "precision": "bf16",
                    "framework": framework,
                    "global_batch_tokens": 524_288,
                    "parallelism": {"zero": 1},
                },
            }
        )

    speedup = steps_hours(gpt2("megatron")) / steps_hours(gpt2("llm.c"))
    assert 1.05 < speedup < 1.25


def _gpt2(framework: str) -> dict[str, object]:
    """A GPT-2 fine-tune on ``framework``."""
    return {
        "name": "t",
        "kind": "finetune",
        "model": "gpt2",
        "data": {"tokens": 1e6},
        "training": {"framework": framework},
    }


@pytest.mark.parametrize(
    ("given", "profile"),
    [
        ("trl", "hf-trainer"),
        ("Axolotl", "hf-trainer"),
        ("MaxText", "jax"),
        ("Megatron Core", "megatron"),
        ("megatron-lm", "megatron"),
        ("hf_trainer", "hf-trainer"),
        ("LitGPT", "lightning"),
        ("FSDP2", "pytorch-fsdp"),
        ("megatron-bridge", "nemo"),
    ],
)
def test_a_stack_is_known_by_its_other_names(given: str, profile: str) -> None:
    assert parse_workload(_gpt2(given)).training.framework == profile


def test_aliases_name_one_stack_each_and_no_profile() -> None:
    profiles = load_frameworks()
    seen: dict[str, str] = {}
    for name, p in profiles.items():
        for alias in p.aliases:
            assert alias not in profiles and alias != "auto", alias
            assert seen.setdefault(alias, name) == name, alias
            assert alias == alias.lower() and "_" not in alias and " " not in alias


def test_an_unknown_stack_is_still_refused_with_the_names() -> None:
    with pytest.raises(ConfigError) as e:
        parse_workload(_gpt2("unsloth"))
    assert e.value.key_path == "training.framework"
    assert "unknown framework 'unsloth'" in str(e.value)


def test_a_misspelt_other_name_is_suggested() -> None:
    for given, meant in (("axolotol", "axolotl"), ("megatorn", "megatron")):
        with pytest.raises(ConfigError) as e:
            parse_workload(_gpt2(given))
        assert f"did you mean {meant}" in str(e.value.hint)


def test_the_help_and_the_readme_name_every_stack() -> None:
    """review: the lightning stack was added to frameworks.yaml but not to ``--framework``'s help
    or the README's list of stacks, which named every other profile."""
    from pathlib import Path

    names = set(load_frameworks())
    result = CliRunner().invoke(main, ["estimate", "--help"], terminal_width=200)
    assert result.exit_code == 0
    help_text = " ".join(result.output.split())
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    listed = readme.split("`--framework ", 1)[1].split("`", 1)[0].split("\\|")
    for name in sorted(names):
        assert name in help_text.split("Training software stack (", 1)[1].split(")")[0], name
    assert names <= set(listed), names - set(listed)
