"""Bad input and silently wrong results the nineteenth sweep found: ``--p95-ttft 0.5`` (half a
second, written without a unit) was refused as "no fleet meets 0.5 ms" with no word of the unit;
``estimate`` of a service as CSV left out every serving figure the table and JSON give; a rotary
model trained past the context it was released with said nothing of the extension.

The product rule each test pins: bad input gets a clear error naming the field and a fix, and no
result is silently wrong or silently incomplete.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import planner
import planner.gpu_specs
import planner.workload
from planner.cli import main
from planner.errors import ConfigError, InfeasibleError, UnknownNameError


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path / "data"))


def _run(*args: str) -> Any:
    result = CliRunner().invoke(main, list(args))
    assert "Traceback" not in result.output
    return result


def test_a_latency_in_seconds_without_its_unit_gets_the_unit_in_the_hint() -> None:
    out = _run("quote", "--workload", "llm-serving-70b", "--rps", "5", "--p95-ttft", "0.5")
    assert out.exit_code == 3
    assert "p95 TTFT 0.5 ms: the fastest reachable is" in out.stderr
    assert "a target without a unit is milliseconds: if you meant seconds, write " in out.stderr
    assert "(--p95-ttft 0.5s)" in out.stderr
    # the hint's fix works: half a second is quoted
    fixed = _run("quote", "--workload", "llm-serving-70b", "--rps", "5", "--p95-ttft", "0.5s")
    assert fixed.exit_code == 0, fixed.output
    assert "p95 TTFT <= 500 ms" in fixed.stdout


def test_a_target_no_number_of_seconds_would_reach_gets_no_unit_hint() -> None:
    # 1.5 ms of TPOT is out of reach and 1.5 s is not: the hint names the seconds; 20 ms of TTFT
    # is out of reach too, but above the 10 ms below which a bare number looks like seconds
    with pytest.raises(InfeasibleError) as err:
        planner.api.quote_service(workload="llm-serving-70b", tpot_ms_p95=1.5)
    assert "write tpot_ms_p95=1500 (--p95-tpot 1.5s)" in (err.value.hint or "")
    with pytest.raises(InfeasibleError) as err:
        planner.api.quote_service(workload="llm-serving-70b", ttft_ms_p95=20.0)
    assert "if you meant seconds" not in (err.value.hint or "")
    assert "loosen the targets" in (err.value.hint or "")


def test_a_service_estimate_as_csv_carries_its_serving_figures() -> None:
    out = _run("estimate", "llm-serving-70b", "--gpu", "H100", "--count", "8", "--format", "csv")
    assert out.exit_code == 0, out.output
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert len(rows) == 1
    row = rows[0]
    as_json = _run(
        "estimate", "llm-serving-70b", "--gpu", "H100", "--count", "8", "--format", "json"
    )
    doc = json.loads(as_json.stdout)
    for key in ("ttft_ms", "tpot_ms", "e2e_ms"):
        for q in ("p50", "p95"):
            assert float(row[f"{key}_{q}"]) == pytest.approx(doc[key][q], rel=1e-9)
    assert int(row["replicas"]) == doc["replicas"]
    assert float(row["capacity_requests_per_second"]) == pytest.approx(
        doc["capacity_requests_per_second"], rel=1e-9
    )


def test_an_image_service_estimate_as_csv_carries_its_latency_per_image() -> None:
    out = _run(
        "estimate",
        "stable-diffusion-generation",
        "--gpu",
        "H100",
        "--count",
        "1",
        "--format",
        "csv",
    )
    assert out.exit_code == 0, out.output
    row = next(csv.DictReader(io.StringIO(out.stdout)))
    assert float(row["latency_ms_p95"]) >= float(row["latency_ms_p50"]) > 0
    assert float(row["capacity_images_per_second"]) > 0
    assert "ttft_ms_p50" not in row


def test_training_past_the_released_context_is_named_as_a_context_extension() -> None:
    args = ["--model", "llama-2-7b", "--method", "lora", "--tokens", "10M", "--gpu", "H100"]
    long = _run("estimate", *args, "--seq-len", "32768")
    assert long.exit_code == 0, long.output
    assert (
        "sequences of 32,768 tokens are longer than the 4,096-token context llama-2-7b was "
        "released with: a context extension" in long.stdout
    )
    native = _run("estimate", *args, "--seq-len", "4096")
    assert native.exit_code == 0, native.output
    assert "context extension" not in native.stdout


@pytest.mark.parametrize(
    ("typed", "gpu"),
    [
        ("L40S-48GB", "L40S"),  # the memory after a name that holds none
        ("A10G 24GB", "A10G"),
        ("L4 24GB", "L4"),
        ("B200-180GB", "B200"),
        ("A100-80GB-SXM", "A100-80GB"),  # a form factor the catalog does not split on
        ("DGX H100", "H100"),  # the GPU a system carries
        ("GH200 480GB", "GH200"),  # NVIDIA's own name for the 96 GB part
    ],
)
def test_gpu_names_with_their_memory_or_system_resolve(typed: str, gpu: str) -> None:
    # was: "unknown GPU 'L40S-48GB'; did you mean L40 48GB or L20 48GB?"
    assert planner.gpu_specs.resolve_gpu(typed).name == gpu


def test_a_memory_size_that_is_not_the_gpus_is_still_refused() -> None:
    with pytest.raises(UnknownNameError, match="unknown GPU 'H100-40GB'"):
        planner.gpu_specs.resolve_gpu("H100-40GB")


@pytest.mark.parametrize("typed", ["TPU v4", "Gaudi2", "Trainium2"])
def test_an_accelerator_the_catalog_does_not_model_is_named_as_such(typed: str) -> None:
    # was: "TPU v4: did you mean T4 or P4?"
    out = _run("estimate", "gpt2-xl-finetune", "--gpu", typed, "--count", "8")
    assert out.exit_code == 2
    assert f"unknown GPU '{typed}'" in out.output
    assert "are not modelled: the catalog holds NVIDIA and AMD GPUs" in out.output
    assert "did you mean" not in out.output


@pytest.mark.parametrize(
    ("typed", "preset", "params"),
    [
        ("Llama 3.1 8B", "llama-3.1-8b", 8.03e9),  # the words apart, as a model card writes them
        ("LLaMA 65B", "llama-65b", 65.2e9),  # Touvron et al. 2023, Table 2
        ("huggyllama/llama-7b", "llama-7b", 6.7e9),
        ("Qwen1.5-7B-Chat", "qwen1.5-7b", 7.72e9),
        ("vicuna-7b-v1.5", "llama-2-7b", 6.74e9),
        ("tinyllama", "tinyllama-1.1b", 1.1e9),
    ],
)
def test_model_names_as_people_write_them_resolve(typed: str, preset: str, params: float) -> None:
    spec = planner.workload.parse_workload(
        {"name": "x", "kind": "finetune", "model": typed, "data": {"tokens": 1e6}}
    )
    assert spec.model.preset == preset
    assert spec.model.params == pytest.approx(params, rel=0.01)


def test_an_unknown_model_says_how_to_give_one_outside_the_presets(tmp_path: Path) -> None:
    # was: "falcon-7b: did you mean mistral-7b?" alone
    path = tmp_path / "w.yaml"
    path.write_text(
        "name: x\nkind: finetune\nmodel: falcon-7b\ndata: {tokens: 1e6}\n", encoding="utf-8"
    )
    out = _run("estimate", str(path), "--gpu", "H100")
    assert out.exit_code == 2
    assert "w.yaml: model: unknown model preset 'falcon-7b'" in out.output
    assert "by its shape, model: {arch: decoder" in out.output
    assert "--model path/to/config.json" in out.output
    cli = _run("estimate", "--model", "phi-2", "--tokens", "10M", "--gpu", "H100")
    assert cli.exit_code == 2
    assert "unknown model preset 'phi-2'" in cli.output
    assert "by its shape" in cli.output


BUDGET = Path(__file__).resolve().parent.parent / "scenarios" / "budgets" / "2027-ml-platform.yaml"


@pytest.mark.parametrize(
    ("old", "new", "key", "entry"),
    [
        (
            "on_demand_usd_per_gpu_hour: 2.99",
            "on_demand_usd_per_gpu_hour: 0",
            "classes[0].on_demand_usd_per_gpu_hour",
            "the key",
        ),
        (
            "spot: {usd_per_gpu_hour: 1.47",
            "spot: {usd_per_gpu_hour: 0.001",
            "classes[0].spot.usd_per_gpu_hour",
            "the spot entry",
        ),
    ],
)
def test_a_budget_price_of_nothing_is_refused(
    tmp_path: Path, old: str, new: str, key: str, entry: str
) -> None:
    # was: an on-demand price of 0 planned H100 capacity as free (193k USD for a 905k plan), and
    # the warnings blamed the spot and commitment prices beside it
    text = BUDGET.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "b.yaml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    out = _run("budget", str(path), "--no-sensitivity")
    assert out.exit_code == 2
    assert f"b.yaml: {key}: " in out.output
    assert "makes this capacity free" in out.output
    assert f"or leave {entry} out" in out.output


def test_a_price_list_row_in_a_region_the_provider_lacks_is_named(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # was: lambda,us-eest-1 became a region Lambda does not have, recommended without a word
    offers = _run("offers", "--provider", "lambda", "--gpu", "H100:8", "--format", "csv")
    assert offers.exit_code == 0, offers.output
    header, first = offers.stdout.splitlines()[:2]
    cells = first.split(",")
    region = header.split(",").index("region")
    cells[region] = "us-eest-1"
    path = tmp_path / "mine.csv"
    path.write_text(f"{header}\n{','.join(cells)}\n", encoding="utf-8")
    with caplog.at_level("WARNING"):
        listed = _run("offers", "--offers", str(path), "--provider", "lambda", "--format", "csv")
    assert listed.exit_code == 0, listed.output
    text = caplog.text
    assert "mine.csv: row 2: lambda has no region 'us-eest-1' in the bundled prices" in text
    assert "us-east-1" in text.split("us-eest-1", 1)[1]  # the nearest region is named


def test_one_evaluation_pass_over_more_than_ten_times_the_training_data_is_refused(
    tmp_path: Path,
) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(
        "name: m\nkind: finetune\nmodel: llama-2-7b\n"
        "data: {tokens: 1e8, eval_every: 1, eval_tokens: 1e15}\n",
        encoding="utf-8",
    )
    out = _run("estimate", str(path), "--gpu", "H100", "--count", "8")
    assert out.exit_code == 2
    assert "w.yaml: data.eval_tokens: 1e+15 tokens in one evaluation pass is more than 10x" in (
        out.output
    )


def test_evaluation_that_outlasts_the_training_is_noted(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(
        "name: m\nkind: finetune\nmodel: llama-2-7b\n"
        "data: {tokens: 1e8, eval_every: 100, eval_tokens: 1e9}\n",
        encoding="utf-8",
    )
    est = planner.estimate(planner.api.load_workload(str(path)), "H100", 8)
    hours = est.time_breakdown_hours
    ratio = hours["evaluation passes"] / hours["training steps"]
    assert ratio > 1
    note = next(a for a in est.assumptions if a.startswith("evaluation passes take"))
    assert f"{ratio:.3g}x the training steps' time" in note
    quiet = planner.estimate(planner.api.load_workload("gpt2-finetune"), "H100", 1)
    assert not any(a.startswith("evaluation passes take") for a in quiet.assumptions)


def test_an_active_count_below_what_the_shape_runs_is_refused() -> None:
    model = {
        "params": 46.7e9,
        "experts": 8,
        "experts_per_token": 2,
        "active_params": 1e6,
        "layers": 32,
        "hidden": 4096,
        "heads": 32,
        "kv_heads": 8,
        "seq_len": 4096,
        "vocab": 32000,
        "ffn": 14336,
        "mlp": "gated",
    }
    raw = {"name": "m", "kind": "finetune", "model": model, "data": {"tokens": 1e8}}
    with pytest.raises(ConfigError, match=r"at least 1\.28e\+10") as err:
        planner.workload.parse_workload(raw)
    assert err.value.key_path == "model.active_params"
    model["active_params"] = 12.9e9  # Mixtral 8x7B's own
    assert planner.workload.parse_workload(raw).model.active_params == 12.9e9


def test_a_request_whose_beams_overflow_the_gpu_shows_its_kv_cache(tmp_path: Path) -> None:
    # was: "needs 13.8 GiB" of an 80 GiB GPU, no KV cache row, the weights blamed
    path = tmp_path / "beams.yaml"
    path.write_text(
        "name: beams\nkind: inference\nmodel: llama-2-7b\n"
        "inference: {requests_per_s: 2, hours: 730, beam_width: 1024, max_batch: 1}\n",
        encoding="utf-8",
    )
    est = planner.estimate(planner.api.load_workload(str(path)), "A100-80GB", 1)
    assert not est.fits
    kv = est.memory_breakdown_gib["kv_cache"]
    # Llama 2 7B: 2 x 32 layers x 4,096 x 2 bytes = 0.5 MiB a token; 512 + 1,024 x 256 tokens
    assert kv == pytest.approx((512 + 1024 * 256) * 0.5 / 1024, rel=0.02)
    assert est.memory_per_gpu_gib > 80
    advice = est.suggestions[0]
    assert "the longest request holds" in advice and "fewer beams (inference.beam_width)" in advice
    assert "up to 1 here" not in " ".join(est.suggestions)


def test_calibrate_record_takes_the_precision_its_error_suggests(tmp_path: Path) -> None:
    args = ["calibrate", "record", "gpt2-finetune", "--gpu", "T4"]
    refused = _run(*args, "--measured-tokens-per-second", "10000")
    assert refused.exit_code == 2
    assert "--precision fp16" in refused.output
    fixed = _run(*args, "--measured-tokens-per-second", "10000", "--precision", "fp16")
    assert fixed.exit_code == 0, fixed.output
    assert "(hf-trainer, fp16)" in fixed.output and "tokens/s" in fixed.output
    images = _run(
        "calibrate",
        "record",
        "resnet50-imagenet",
        "--gpu",
        "A100-80GB",
        "--measured-step-seconds",
        "0.5",
    )
    assert images.exit_code == 0, images.output
    assert "samples/s" in images.output and "tokens/s" not in images.output


def test_a_discount_of_one_says_it_is_everything_off() -> None:
    out = _run("quote", "-w", "gpt2-xl-finetune", "--deadline", "24h", "--discount", "aws=1.0")
    assert out.exit_code == 2
    assert "is 100% off: capacity for free" in out.output
    assert "aws=0.12 or aws=12%" in out.output


@pytest.mark.parametrize(
    ("name", "content", "said"),
    [
        (
            "adapter_config.json",
            '{"peft_type": "LORA", "r": 16, "base_model_name_or_path": "meta-llama/Llama-2-7b-hf"}',
            "is a PEFT LORA adapter config of meta-llama/Llama-2-7b-hf, not a model config",
        ),
        (
            "generation_config.json",
            '{"max_new_tokens": 256, "temperature": 0.7}',
            "generation config",
        ),
        ("tokenizer_config.json", '{"tokenizer_class": "LlamaTokenizer"}', "tokenizer's config"),
        ("model.safetensors.index.json", '{"weight_map": {"a": "b"}}', "weight shards"),
    ],
)
def test_another_json_file_of_a_model_folder_is_named(
    tmp_path: Path, name: str, content: str, said: str
) -> None:
    # was: "no model_type: read as a plain decoder", then "no hidden_size in the config"
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    out = _run("estimate", "--model", str(path), "--tokens", "10M", "--gpu", "H100")
    assert out.exit_code == 2
    assert said in out.output
    assert "model_type" not in out.output
    if name == "adapter_config.json":
        assert "--model meta-llama/Llama-2-7b-hf --method lora" in out.output
    else:
        assert "config.json in the same folder" in out.output


def test_an_owned_only_service_that_no_machine_holds_names_the_machines() -> None:
    # was: "no offer fits one replica; allow bigger GPUs (--gpu)", which --owned-only rules out
    out = _run("quote", "-w", "llm-serving-7b", "--owned-only", "--hardware", "workstation-rtx3060")
    assert out.exit_code == 3
    assert "no owned machine holds one replica of the model: workstation-rtx3060 (1 x RTX3060" in (
        out.stderr
    )
    assert "drop --owned-only" in out.stderr and "--gpu" not in out.stderr


def test_a_stale_private_price_list_is_the_users_to_update(tmp_path: Path) -> None:
    offers = _run("offers", "--provider", "lambda", "--gpu", "H100:8", "--format", "csv")
    header, first = offers.stdout.splitlines()[:2]
    names = header.split(",")
    cells = first.split(",")
    cells[names.index("provider")] = "acme"
    cells[names.index("as_of")] = "2019-01-01"
    path = tmp_path / "acme.csv"
    path.write_text(f"{header}\n{','.join(cells)}\n", encoding="utf-8")
    out = _run("offers", "--offers", str(path), "--provider", "acme", "--format", "json")
    assert out.exit_code == 0, out.output
    assert f"they come from your price list {path}: update its prices and its as_of column" in (
        out.stderr
    )
    assert "new planner release" not in out.stderr


def test_a_blank_framework_is_refused_with_model_as_with_a_workload() -> None:
    # was: --model ... --framework '' ran as auto, while a named workload refused it
    out = _run(
        "estimate", "--model", "llama-2-7b", "--tokens", "50M", "--gpu", "H100", "--framework", ""
    )
    assert out.exit_code == 2
    assert "training.framework: unknown framework ''" in out.output


def test_the_utilization_range_is_stated_as_it_is_checked() -> None:
    # was: "(0, 1]" for 0, then 1e-6 refused with "[0.01, 1]"
    for value in ("0", "1e-6"):
        out = _run("tco", "--hardware", "8xh100-hgx", "--utilization", value)
        assert out.exit_code == 2
        assert "[0.01, 1]" in out.output and "(0, 1]" not in out.output


@pytest.mark.parametrize("flag", ["-v", "--verbose"])
def test_verbose_after_the_command_says_where_it_goes(flag: str) -> None:
    out = _run("estimate", "gpt2-finetune", "--gpu", "H100", flag)
    assert out.exit_code == 2
    assert f"{flag} is an option of planner itself, not of estimate: put it before the command" in (
        out.output
    )
    nested = _run("prices", "status", flag)
    assert nested.exit_code == 2
    assert f"not of prices status: put it before the command (planner {flag} prices status" in (
        nested.output
    )
    assert _run(flag, "estimate", "gpt2-finetune", "--gpu", "H100").exit_code == 0


def test_a_price_list_given_as_a_hardware_file_is_named(tmp_path: Path) -> None:
    offers = _run("offers", "--provider", "lambda", "--gpu", "H100:8", "--format", "csv")
    path = tmp_path / "prices.csv"
    path.write_text(offers.stdout, encoding="utf-8")
    out = _run("tco", "--hardware", str(path))
    assert out.exit_code == 2
    assert "is a CSV price list (its header starts provider,region,...)" in out.output
    assert "--offers prices.csv" in out.output
    assert "secret" not in out.output


def test_every_problem_of_a_file_is_named_not_counted(tmp_path: Path) -> None:
    # was: "... (and 1 more problem)", the other field left to find on the next run
    path = tmp_path / "w.yaml"
    path.write_text(
        "name: w\nkind: inference\nmodel: llama-2-7b\ninference: {requests_per_s: 1, hours: 1, "
        "prompt_tokens_p95: 100, output_tokens_p95: 10}\n",
        encoding="utf-8",
    )
    out = _run("estimate", str(path), "--gpu", "H100")
    assert out.exit_code == 2
    assert "inference.prompt_tokens_p95: 100 is below the mean prompt_tokens" in out.output
    assert "(and 1 more problem: inference.output_tokens_p95)" in out.output


def test_moe_dense_layers_past_the_last_layer_are_refused(tmp_path: Path) -> None:
    config = {
        "model_type": "qwen3_moe",
        "hidden_size": 2048,
        "num_hidden_layers": 48,
        "num_attention_heads": 32,
        "num_key_value_heads": 4,
        "head_dim": 128,
        "intermediate_size": 6144,
        "moe_intermediate_size": 768,
        "num_experts": 128,
        "num_experts_per_tok": 8,
        "vocab_size": 151936,
        "max_position_embeddings": 40960,
        "tie_word_embeddings": False,
        "mlp_only_layers": [100, 200],
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    args = ["estimate", "--model", str(path), "--tokens", "10M", "--gpu", "H100", "--count", "8"]
    out = _run(*args)
    assert out.exit_code == 2
    assert "mlp_only_layers: layers 100, 200 are not among the model's 48" in out.output
    config["mlp_only_layers"] = "0,1"
    path.write_text(json.dumps(config), encoding="utf-8")
    text = _run(*args)
    assert text.exit_code == 2
    assert "a JSON list of whole numbers from 0 to 47, e.g. [0, 1]" in text.output


def test_a_resale_at_the_full_price_is_warned_of(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    source = Path(__file__).resolve().parent.parent / "scenarios" / "hardware" / "8xh100-hgx.yaml"
    text = source.read_text(encoding="utf-8")
    path = tmp_path / "hw.yaml"
    path.write_text(
        "\n".join(line for line in text.splitlines() if not line.startswith("resale_fraction"))
        + "\nresale_fraction: 1.0\n",
        encoding="utf-8",
    )
    with caplog.at_level("WARNING"):
        out = _run("tco", "--hardware", str(path), "--format", "json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)  # the document alone on stdout
    assert "resale_fraction: 1 sells the machine for 100% of its price" in caplog.text


def test_a_blank_api_key_is_called_blank(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LAMBDA_API_KEY", "   ")
    out = _run("prices", "refresh", "--provider", "lambda", "--dry-run")
    assert out.exit_code != 0
    assert "LAMBDA_API_KEY is blank" in out.output
    assert "is not set" not in out.output


def test_tokens_beside_a_served_workload_name_its_load() -> None:
    # was: "gives its own amount of data (data.tokens or data.samples)", of a file with no data
    out = _run("estimate", "llm-serving-7b", "--gpu", "H100", "--tokens", "5M")
    assert out.exit_code == 2
    assert "the workload llm-serving-7b gives its own load (inference.requests_per_s" in out.output
    assert "data.tokens" not in out.output


def test_a_price_lists_link_written_by_another_name_gets_its_name(tmp_path: Path) -> None:
    offers = _run("offers", "--provider", "lambda", "--gpu", "H100:8", "--format", "csv")
    header, first = offers.stdout.splitlines()[:2]
    names = header.split(",")
    cells = first.split(",")
    cells[names.index("fabric")] = "IB"
    path = tmp_path / "mine.csv"
    path.write_text(f"{header}\n{','.join(cells)}\n", encoding="utf-8")
    out = _run("offers", "--offers", str(path))
    assert out.exit_code == 2
    assert "column 'fabric': 'ib' is not one of" in out.output
    assert "did you mean 'infiniband'? (ib names infiniband)" in out.output


def test_a_node_larger_than_the_gpus_nvlink_domain_is_warned_of(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # was: 64 H100s on NVSwitch taken as one node without a word (an HGX board joins 8)
    args = ["estimate", "gpt2-xl-finetune", "--gpu", "H100", "--count", "64"]
    with caplog.at_level("WARNING"):
        out = _run(*args, "--gpus-per-node", "64", "--interconnect", "nvswitch")
    assert out.exit_code == 0, out.output
    assert (
        "64 H100 GPUs on NVSwitch in one node: the largest NVLink domain of the H100 joins 8"
        in (caplog.text)
    )
    caplog.clear()
    with caplog.at_level("WARNING"):
        rack = _run(
            "estimate",
            "gpt2-xl-finetune",
            "--gpu",
            "GB200",
            "--count",
            "72",
            "--gpus-per-node",
            "72",
        )
    assert rack.exit_code == 0, rack.output
    assert "NVLink domain" not in caplog.text  # an NVL72 rack is one domain
