"""Bad input the YAML corpus cannot spell: bytes that are not UTF-8 text, byte-order marks, a
spreadsheet saved under a .csv name, a model folder, stdout kept clean for ``--format json``,
and a mirror URL that carries a key.

The rules each test pins:

- a price list or config.json that is not UTF-8 text, or a binary file (an .xlsx), is a
  ConfigError naming the file and how to save it, exit 2, never a codec traceback;
- a UTF-8 byte-order mark (Excel's "CSV UTF-8", Notepad) is read, not refused;
- ``--model FOLDER`` reads the folder's config.json, as Hugging Face downloads it;
- with ``--format json`` or ``csv`` an error leaves stdout empty: the document or nothing;
- a mirror URL that is not http(s) names its variable and never prints the key it carries.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import planner
from planner.cli import main
from planner.errors import ConfigError, OfferValidationError
from tests.conftest import offer_row

LLAMA = {
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 11008,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 32,
    "vocab_size": 32000,
    "max_position_embeddings": 4096,
}


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=env)


def assert_clean_error(result: Result, *needles: str, code: int = 2) -> None:
    assert result.exit_code == code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle.lower() in result.output.lower(), (needle, result.output)


def price_list(**changes: str) -> str:
    row = {k: str(v) for k, v in offer_row().items()} | changes
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(row))
    writer.writeheader()
    writer.writerow(row)
    return out.getvalue()


@pytest.fixture(autouse=True)
def _own_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANNER_DATA_DIR", str(tmp_path / "data"))


# --- price lists -------------------------------------------------------------------------------


def test_latin1_price_list_names_the_byte_and_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "prices.csv"
    path.write_bytes(price_list(source="Café list").encode("latin-1"))
    result = invoke("offers", "--offers", str(path))
    assert_clean_error(result, "prices.csv", "not UTF-8 text (byte 0xe9 on line 2)", "CSV UTF-8")


def test_spreadsheet_saved_as_csv_is_refused_as_binary(tmp_path: Path) -> None:
    path = tmp_path / "prices.csv"
    path.write_bytes(b"PK\x03\x04\x14\x00\x06\x00" + b"\x00" * 64)  # an .xlsx is a zip
    result = invoke("quote", "-w", "gpt2-xl-finetune", "--deadline", "24h", "--offers", str(path))
    assert_clean_error(result, "prices.csv", "binary file (a spreadsheet?)", "export it as CSV")


def test_price_list_with_byte_order_mark_reads(tmp_path: Path) -> None:
    path = tmp_path / "prices.csv"
    path.write_bytes(b"\xef\xbb\xbf" + price_list(provider="acme").encode("utf-8"))
    result = invoke("offers", "--offers", str(path), "--provider", "acme", "--format", "json")
    assert result.exit_code == 0, result.output
    assert [row["provider"] for row in json.loads(result.stdout)] == ["acme"]


def test_library_reads_price_lists_the_same_way(tmp_path: Path) -> None:
    path = tmp_path / "prices.csv"
    path.write_text("provider;region;instance_type\nacme;us-east-1;x\n", encoding="utf-8")
    with pytest.raises(OfferValidationError, match="separated by semicolons"):
        planner.offers(offers_files=[path])


# --- Hugging Face config.json ------------------------------------------------------------------


def test_config_json_with_byte_order_mark_reads(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(LLAMA).encode("utf-8"))
    result = invoke("estimate", "--model", str(path), "--tokens", "5M", "--gpu", "H100")
    assert result.exit_code == 0, result.output


def test_binary_config_json_is_not_utf8_text(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(b"\x00\x01\x02\xff")
    result = invoke("estimate", "--model", str(path), "--tokens", "5M", "--gpu", "H100")
    assert_clean_error(result, "config.json", "not UTF-8 text", "pass the model's config.json")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        # arrays nested thousands deep: json.loads raised RecursionError
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        # an integer of 5,000 digits: json.loads raised ValueError (Python's int_max_str_digits)
        ('{"hidden_size": 1' + "0" * 5000 + "}", "a number thousands of digits long"),
    ],
    ids=["nested-deep", "number-5000-digits"],
)
def test_config_json_past_the_json_parsers_limits(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(text, encoding="utf-8")
    result = invoke("estimate", "--model", str(path), "--tokens", "5M", "--gpu", "H100")
    assert_clean_error(result, "config.json", "not a readable JSON file", reason)
    assert "sys.set_int_max_str_digits" not in result.output
    with pytest.raises(ConfigError, match=reason):
        planner.workload_from_facts(str(path), tokens=5e6)


def test_model_folder_reads_its_config_json(tmp_path: Path) -> None:
    folder = tmp_path / "Llama-2-7b-hf"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(LLAMA), encoding="utf-8")
    spec = planner.workload_from_facts(str(folder), tokens=5e6)
    assert spec.model.hidden == 4096
    assert spec.name.startswith("Llama-2-7b-hf")


def test_model_that_is_a_workload_file_says_where_it_goes(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text("name: job\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="WORKLOAD") as caught:
        planner.workload_from_facts(str(path), tokens=5e6)
    assert caught.value.key_path == "model"


# --- machine-readable output stays clean --------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("estimate", "gpt2-xl-finetune", "--gpu", "H1000", "--format", "json"),
        ("offers", "--min-gpu-memory", "80GB", "--format", "csv"),
        (
            "quote",
            "-w",
            "gpt2-xl-finetune",
            "--deadline",
            "24h",
            "--confidence",
            "0.9",
            "--format",
            "json",
        ),
        ("tco", "--hardware", "8xh100-hgx", "--utilization", "60%", "--format", "json"),
    ],
)
def test_errors_leave_stdout_empty_for_documents(args: tuple[str, ...]) -> None:
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert "error" in result.stderr.lower()


# --- secrets -------------------------------------------------------------------------------------


def test_bad_mirror_url_names_the_variable_not_the_key() -> None:
    env = {
        "LAMBDA_API_KEY": "sk-should-never-show",
        "PLANNER_LAMBDA_API_URL": "lambda.example/api?key=sk-should-never-show",
    }
    result = invoke("prices", "refresh", "--provider", "lambda", "--dry-run", env=env)
    assert result.exit_code != 0
    assert "PLANNER_LAMBDA_API_URL" in result.output
    assert "is not an http(s) URL" in result.output
    assert "sk-should-never-show" not in result.output
