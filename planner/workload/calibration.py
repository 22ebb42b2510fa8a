"""Calibration from the user's own runs: a measured throughput corrects later estimates of
similar jobs.

``planner calibrate record`` estimates a run the user measured (workload, GPU, count) and keeps
the ratio measured / estimated training throughput in ``calibration.yaml`` in the user data
folder (``$PLANNER_DATA_DIR`` overrides it).  A later training estimate on the same GPU model,
with the same software stack, precision, method and kind, takes the most recent such ratio on its
training steps and says so ("calibrated from your run of 2026-11-25 ...").  Writes are atomic
(a temporary file renamed into place, under a file lock), so a crash never leaves half a file.
"""

from __future__ import annotations

import datetime
import math
import os
import re
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from planner.errors import (
    ConfigError,
    UnknownNameError,
    is_number,
    is_whole_number,
    suggest,
)
from planner.workload.estimate_types import PAUSES_PHASE, Estimate
from planner.workload.spec import Kind, WorkloadSpec, workload_framework

FILE_NAME = "calibration.yaml"
# A measured throughput this far from the estimate is more likely a typo or a different job than
# a calibration (a factor of 10 either way).
MAX_FACTOR = 10.0
# A measured rate within this of the estimate's divided by the GPU count is one GPU's rate given
# for the whole run (calibrations record the whole run's tokens per second).
PER_GPU_SLIP = 0.25
# The estimator's revision a run's factor was measured against.  A factor is the measured over the
# *then* estimated throughput, so once the estimate of an unchanged run moves, an older factor
# mis-corrects: such runs are kept and listed but not applied, and the estimate says to record them
# again.  Bump it when a change moves the estimate of the same run.  1: every estimator before
# revisions were recorded (a file without the field); 2: an eager stack's host dispatch time per
# layer (eager fine-tunes of small models or short micro-batches up to ~4x slower); 3: an eager
# stack's separate elementwise kernels stream their own memory traffic (efficiency.eager_traffic),
# its matmul factors re-derived (eager Llama-style fine-tunes up to ~15% slower, BERT-style faster);
# 4: QLoRA's dequantisation streamed per micro-batch in place of a flat 1.39x slowdown; 5: an image
# model trains on eager PyTorch under auto, its activation and add kernels streaming their own
# traffic (efficiency.EAGER_IMAGE_VALUES_PER_STORED_VALUE), its activations at the precision's width;
# 6: an eager layer's further kernels measured on an H100 (an unpadded output layer on cuBLAS's
# unaligned kernels, torch's foreach AdamW, GPT-2's arithmetic GeLU, tf32 attention at the fp32 rate)
# and eager autocast's fp32 residual stream (efficiency.autocast_stream_bytes): eager fine-tunes of
# GPT-2- and BERT-style models 5-40% slower; their LoRA adapters counted from the model's
# projections (efficiency.lora_modules); 7: GeForce cards' matmuls at 0.62 of their peak, not the
# Hopper share (efficiency.GEMM_FRACTION): runs on RTX 20-, 30-, 40- and 50-series cards ~16% faster;
# a paged optimizer's states in host RAM on AMD GPUs (strategy._paging); a global batch in tokens
# rounded to whole sequences; 8: A100 matmuls at 0.65 of their peak, not 0.55 (efficiency.
# GEMM_FRACTION): steady A100 steps ~15% faster; a job of a few GPU-days and longer loses at least
# 0.17 of its steps' time to interruptions, pauses and slow stretches (efficiency.run_time_losses);
# 9: a CNN's 3x3 stride-1 convolutions run as Winograd transforms where its convolutions run on the
# CUDA cores (fp32, GPUs without tensor cores; efficiency.winograd_speedup): such runs faster;
# 10: AMD CDNA4 (MI350X, MI355X) matmuls at 0.47 of their peak, not the unmeasured 0.35
# (efficiency.GEMM_FRACTION): runs on them ~25% faster.
ESTIMATOR_REVISION = 10

# How an estimate's assumption lines about the user's recorded runs begin (a quote repeats them).
CALIBRATION_NOTE_STARTS = ("calibrated from your run of", "not calibrated: your run of")


@dataclass(frozen=True)
class Calibration:
    """One measured run and what the estimator said for it."""

    id: str
    recorded_on: str  # ISO date
    workload: str
    gpu: str
    count: int
    precision: str
    framework: str  # the resolved software stack (hf-trainer, megatron, ...)
    method: str
    kind: str
    measured_tokens_per_s: float  # training throughput of the whole gang
    estimated_tokens_per_s: float
    # the estimator revision ``estimated_tokens_per_s`` came from (ESTIMATOR_REVISION); 1 in a file
    # written before revisions were recorded
    estimator_revision: int = 1

    @property
    def factor(self) -> float:
        """Measured over estimated throughput: above 1, the run was faster than estimated."""
        return self.measured_tokens_per_s / self.estimated_tokens_per_s

    @property
    def applies(self) -> bool:
        """Whether later estimates use it: its factor was measured against this estimator."""
        return self.estimator_revision == ESTIMATOR_REVISION

    def matches(self, key: tuple[str, str, str, str, str]) -> bool:
        return (self.gpu, self.framework, self.precision, self.method, self.kind) == key


# The columns of a listed run (planner.api.calibrations): its fields, its factor and whether it
# applies; a CSV of no runs keeps them as its header.
LISTED_COLUMNS = (*(f.name for f in fields(Calibration)), "factor", "applies")


def calibration_file() -> Path:
    """Where calibrations are kept: ``$PLANNER_DATA_DIR/calibration.yaml`` or the user data folder."""
    from planner.config.datadir import data_dir_setting

    override = data_dir_setting()
    if override is not None:
        from planner.config.yamlfile import probe
        from planner.errors import shown_path

        info = probe(override)
        if info is not None and not stat.S_ISDIR(info.st_mode):
            # was: no runs listed and none applied, silently (a file has no calibration.yaml)
            raise ConfigError(
                f"PLANNER_DATA_DIR={shown_path(override)} is a file, not a folder",
                hint="set PLANNER_DATA_DIR to a folder (calibration.yaml and snapshots/ go in it), "
                "or unset it to use the default",
            )
        return Path(override) / FILE_NAME
    import platformdirs

    return Path(platformdirs.user_data_dir("planner")) / FILE_NAME


def load_calibrations(path: Path | None = None) -> tuple[Calibration, ...]:
    """The recorded calibrations (none when the file does not exist)."""
    from planner.config.yamlfile import probe, read_yaml

    path = path or calibration_file()
    if probe(path) is None:
        return ()
    fix = (
        "it holds only the runs `planner calibrate record` keeps: fix the entry, or move the file "
        "away and record the runs again"
    )
    # read as every user file is: a folder, a binary or non-UTF-8 file, a key written twice or
    # YAML nested thousands deep is a ConfigError naming the file (they escaped as
    # UnicodeDecodeError and RecursionError tracebacks)
    rows = read_yaml(path, what="calibration file") or []
    if not isinstance(rows, list):
        names = {f.name for f in fields(Calibration)}
        if isinstance(rows, dict) and names & set(map(str, rows)):
            # one run without its "- ": was "expected a list" and "fix the entry" alone
            raise ConfigError(
                "expected a list of recorded runs, got one run written as a mapping",
                file=str(path),
                hint="each run is an item of a list: start its first line (id: ...) with '- ' and "
                "indent the lines after it by two spaces",
            )
        raise ConfigError("expected a list of recorded runs", file=str(path), hint=fix)
    runs = tuple(_calibration(row, i, str(path), fix) for i, row in enumerate(rows))
    for i, run in enumerate(runs):
        if any(earlier.id == run.id for earlier in runs[:i]):
            # `calibrate remove ID` and every estimate's note name a run by its id
            raise ConfigError(
                f"id {run.id!r} appears twice",
                file=str(path),
                key_path=f"[{i}].id",
                hint="give each recorded run its own id (c1, c2, ...), or remove the copy",
            )
    return runs


_TEXT_FIELDS = ("id", "workload", "gpu", "precision", "framework", "method", "kind")
_RATE_FIELDS = ("measured_tokens_per_s", "estimated_tokens_per_s")


def _calibration(row: object, i: int, file: str, fix: str) -> Calibration:
    """Entry ``i`` of the calibration file, checked field by field (a hand edit that left a
    throughput at zero would divide by it in every later estimate)."""
    if not isinstance(row, dict):
        raise ConfigError(
            f"expected a recorded run (a mapping), got {row!r}",
            file=file,
            key_path=f"[{i}]",
            hint=fix,
        )
    names = [f.name for f in fields(Calibration)]
    for key in row:
        if key not in names:
            raise UnknownNameError(
                "calibration field", str(key), names, file=file, key_path=f"[{i}].{key}"
            )
    for key in names:
        value = row.get(key)
        where = f"[{i}].{key}"
        if value is None and key == "estimator_revision":
            continue  # a run recorded before revisions: revision 1
        if value is None:
            raise ConfigError("required field is missing", file=file, key_path=where, hint=fix)
        if key == "estimator_revision" and not (is_whole_number(value) and value >= 1):
            raise ConfigError(
                f"expected a whole number >= 1, got {value!r}", file=file, key_path=where, hint=fix
            )
        if key in _TEXT_FIELDS and not isinstance(value, str):
            raise ConfigError(f"expected text, got {value!r}", file=file, key_path=where, hint=fix)
        if key == "count" and not (is_whole_number(value) and value >= 1):
            raise ConfigError(
                f"expected a whole number of GPUs >= 1, got {value!r}",
                file=file,
                key_path=where,
                hint=fix,
            )
        if key in _RATE_FIELDS and not (is_number(value) and math.isfinite(value) and value > 0):
            raise ConfigError(
                f"expected a positive number of tokens/s, got {value!r}",
                file=file,
                key_path=where,
                hint=fix,
            )
    recorded_on = _iso_date(row, i, file, fix)
    from planner import clock

    tomorrow = clock.utc_today() + datetime.timedelta(days=1)  # a zone ahead of UTC: its today
    if datetime.date.fromisoformat(recorded_on) > tomorrow:
        # was taken, and estimates said "calibrated from your run of 2099-01-01"
        raise ConfigError(
            f"recorded_on {recorded_on} is in the future",
            file=file,
            key_path=f"[{i}].recorded_on",
            hint=f"give the date the run was measured, up to today ({clock.utc_today()})",
        )
    return _checked_names(Calibration(**{**row, "recorded_on": recorded_on}), i, file)


def _iso_date(row: dict[str, object], i: int, file: str, fix: str) -> str:
    """``recorded_on`` as YYYY-MM-DD (YAML reads an unquoted 2026-01-01 as a date: the same)."""
    value = row["recorded_on"]
    if isinstance(value, datetime.datetime):  # an unquoted timestamp: its day
        return value.date().isoformat()
    if isinstance(value, datetime.date):
        return value.isoformat()
    try:
        return datetime.date.fromisoformat(str(value)).isoformat()
    except ValueError:
        raise ConfigError(
            f"expected a date like 2026-01-01, got {value!r}",
            file=file,
            key_path=f"[{i}].recorded_on",
            hint=fix,
        ) from None


def _checked_names(cal: Calibration, i: int, file: str) -> Calibration:
    """A run whose GPU, stack, precision, method and kind are names the estimator knows, and
    whose factor is one `planner calibrate record` could have kept: a misspelt name would never
    match an estimate, and a factor past ``MAX_FACTOR`` is a slip of a digit in a hand edit."""
    from planner.gpu_specs import load_gpu_catalog
    from planner.workload.frameworks import load_frameworks
    from planner.workload.spec import Method, Precision

    gpu = load_gpu_catalog().resolve(cal.gpu, file=file, key_path=f"[{i}].gpu").name
    for key, value, known in (
        ("framework", cal.framework, list(load_frameworks())),
        ("precision", cal.precision, [p.value for p in Precision]),
        ("method", cal.method, [m.value for m in Method]),
        ("kind", cal.kind, [Kind.PRETRAIN.value, Kind.FINETUNE.value]),
    ):
        if value not in known:
            raise UnknownNameError(key, value, known, file=file, key_path=f"[{i}].{key}")
    if not 1 / MAX_FACTOR <= cal.factor <= MAX_FACTOR:
        raise ConfigError(
            f"measured {cal.measured_tokens_per_s:,.6g} tokens/s is {cal.factor:.3g}x the "
            f"estimated {cal.estimated_tokens_per_s:,.6g}: more than {MAX_FACTOR:g}x apart",
            file=file,
            key_path=f"[{i}].measured_tokens_per_s",
            hint="`planner calibrate record` keeps runs within 10x of the estimate: check the "
            "numbers, or remove the run and record it again",
        )
    return replace(cal, gpu=gpu)


def save_calibrations(calibrations: Sequence[Calibration], path: Path | None = None) -> None:
    """Write the file atomically under a lock: a reader sees the old or the new file, whole.

    A folder the file cannot be written into (``PLANNER_DATA_DIR`` a file, read-only, ``/proc``)
    is a ConfigError saying so: the lock file is made only after a probe shows it can be, since
    ``FileLock`` waits for ever on a lock file it cannot create."""
    import yaml  # here, on the write path: a quote reads no YAML (planner/data/workloads.json)
    from filelock import FileLock

    path = path or calibration_file()
    text = yaml.safe_dump([asdict(c) for c in calibrations], sort_keys=False)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise _write_failed(path, e) from None
    with FileLock(str(path) + ".lock"):
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)
        except OSError as e:
            Path(tmp).unlink(missing_ok=True)
            raise _write_failed(path, e) from None
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def _write_failed(path: Path, e: OSError) -> ConfigError:
    """A calibration file that cannot be written, in the user's words: where, why, the fix."""
    from planner.errors import shown_path

    where = (
        f" (PLANNER_DATA_DIR={shown_path(os.environ['PLANNER_DATA_DIR'])})"
        if os.environ.get("PLANNER_DATA_DIR")
        else ""
    )
    return ConfigError(
        f"cannot write the calibration file in {shown_path(path.parent)}{where}: "
        f"{e.strerror or e}; the runs recorded before are unchanged",
        file=shown_path(path),
        hint="point PLANNER_DATA_DIR at a folder you can write to, or unset it to use the default",
    )


def job_key(spec: WorkloadSpec, gpu: str) -> tuple[str, str, str, str, str]:
    """What makes two runs similar: GPU model, software stack, precision, method and kind."""

    stack, _ = workload_framework(spec)
    t = spec.train
    return gpu, stack.name, t.precision.value, t.method.value, spec.kind.value


def steps_tokens_per_s(spec: WorkloadSpec, est: Estimate) -> float:
    """The training throughput an estimate implies: tokens (samples for a non-transformer) over
    the training steps' hours."""
    steps_h = est.time_breakdown_hours.get("training steps", 0.0)
    per_sample = spec.seq_len if spec.model.is_transformer else 1
    tokens = spec.samples_per_piece * spec.pieces * per_sample
    return tokens / (steps_h * 3600.0) if steps_h > 0 else 0.0


def _rate(per_s: float) -> str:
    """A throughput as a person reads it: 52,000, or 3e-12 (not 0) below one a second."""
    return f"{per_s:,.0f}" if per_s >= 1 else f"{per_s:.3g}"


def check_trainable(spec: WorkloadSpec) -> None:
    """A calibration measures a training run: an inference workload has none."""
    if spec.kind is Kind.INFERENCE:
        raise ConfigError(
            f"{spec.name} is an inference workload; a calibration corrects training estimates "
            "with a measured training run",
            key_path="workload",
            hint="record a training workload's run (kind: finetune or pretrain)",
        )


def _check_all_busy(spec: WorkloadSpec, est: Estimate) -> None:
    """A run whose GPUs the estimate leaves idle measured fewer GPUs than it names: its factor
    would scale every later estimate by the idle share (was: GPT-2 124M "on 1,000,000 GPUs",
    a global batch of 32 sequences, recorded as 6x faster than estimated)."""
    from planner.workload.training import train_facts  # the estimator's own module: on use

    s = est.strategy
    busy_gpus = s.gpus_per_piece * s.concurrent_pieces
    global_batch = train_facts(spec).global_batch
    if busy_gpus < est.gpu_count:  # too few pieces for the GPUs
        busy, of, what = busy_gpus, est.gpu_count, "GPUs"
    elif global_batch < s.data_parallel:  # too few sequences for the data-parallel ranks
        busy, of, what = math.ceil(global_batch), s.data_parallel, "data-parallel ranks"
    else:
        return
    raise ConfigError(
        f"{spec.name} on {est.gpu_count:,} x {est.gpu} keeps only {busy:,} of its {of:,} {what} "
        "busy in the estimate, so a throughput measured on it would calibrate idle GPUs",
        key_path="count",
        hint="record the GPU count the run used (--count), with the workload's global batch and "
        "pieces as the run had them",
    )


def _check_not_one_gpus(est: Estimate, measured_tokens_per_s: float, estimated: float) -> None:
    """Refuse a measured rate within :data:`PER_GPU_SLIP` of the estimate's over the GPU count:
    one GPU's rate given for the whole run (was: 90,000 tokens/s recorded for 8 H100s estimated
    at ~840,000, every later estimate x9.4)."""
    count = est.gpu_count
    factor = measured_tokens_per_s / estimated
    if count <= 1 or abs(factor * count - 1.0) >= PER_GPU_SLIP:
        return
    raise ConfigError(
        f"the measured {_rate(measured_tokens_per_s)} tokens/s is about one GPU's share of "
        f"the estimate's {_rate(estimated)} for all {count} GPUs ({factor:.3g}x it)",
        key_path="measured_tokens_per_second",
        hint=f"did you mean {_rate(measured_tokens_per_s * count)} ({count} x "
        f"{_rate(measured_tokens_per_s)})? give the whole run's tokens per second",
    )


def _check_below_peak(
    spec: WorkloadSpec, est: Estimate, factor: float, measured_tokens_per_s: float
) -> None:
    """Refuse a measured rate the GPUs cannot reach: its steps' model FLOPs utilisation (the
    estimate's, times ``factor``) above what the precision's matmul units give over the 16-bit
    peak it is counted against -- twice-rate fp8 linear layers above 1, fp32 on the CUDA cores far
    below, a CNN's Winograd convolutions on them above (was: 160,000 tokens/s of GPT-2 XL on one
    H100 recorded, and later estimates printed 158.7% MFU)."""
    from planner.gpu_specs import resolve_gpu
    from planner.workload import efficiency as eff
    from planner.workload.training import train_facts

    implied = est.steady_efficiency * factor
    gpu = resolve_gpu(est.gpu)
    f = train_facts(spec)
    peak = eff.precision_peak(gpu, f.precision, f.linear_share)[0]
    most = peak * eff.winograd_speedup(gpu, f.precision, f.conv3x3_share) / gpu.peak_flops
    if implied <= most:
        return
    raise ConfigError(
        f"the measured {_rate(measured_tokens_per_s)} tokens/s would run the {est.gpu_count} x "
        f"{est.gpu} at {implied:.0%} of their dense 16-bit peak in model FLOPs, past the "
        f"{most:.0%} their {f.precision} matmuls can reach",
        key_path="measured_tokens_per_second",
        hint="give the throughput of the run on the GPUs it ran on (--count: all of them), in "
        "tokens per second (samples per second for an image model)",
    )


def new_calibration(
    spec: WorkloadSpec,
    est: Estimate,
    measured_tokens_per_s: float,
    *,
    existing: Sequence[Calibration],
    today: str,
    step_tokens: float | None = None,
) -> Calibration:
    """A calibration of ``spec`` measured at ``measured_tokens_per_s`` against its estimate;
    ``step_tokens``: the run was measured in seconds per optimizer step of that many tokens
    (samples for a non-transformer), and a refusal says so in those terms."""
    check_trainable(spec)
    if not est.fits:
        raise ConfigError(
            f"{spec.name} does not fit on {est.gpu_count} x {est.gpu} in the estimate, so a "
            "measured run cannot calibrate it",
            key_path="workload",
            hint="check the workload, GPU and count of the run you measured",
        )
    if est.step_bounds is not None and est.step_bounds.loader_binds:
        # the run's steps wait on its CPU data loader, so its throughput measures the loader's
        # workers, not the GPU work a factor corrects in later estimates
        raise ConfigError(
            f"{spec.name} on {est.gpu_count} x {est.gpu} waits on its CPU data loader in the "
            f"estimate ({est.step_bounds.loader_hours:,.3g} h of loading against "
            f"{est.step_bounds.gpu_hours:,.3g} h of GPU work), so a measured throughput would "
            "calibrate the loader, not the GPU",
            key_path="data.loader_workers_per_gpu",
            hint="record a run whose loader keeps up with its GPUs (more workers per GPU, or "
            "data.loader: gpu), or leave data.loader_workers_per_gpu out if yours kept up",
        )
    _check_all_busy(spec, est)
    estimated = steps_tokens_per_s(spec, est)
    if not (math.isfinite(measured_tokens_per_s) and measured_tokens_per_s > 0):
        raise ConfigError(
            f"a measured throughput must be a positive number, got {measured_tokens_per_s!r}",
            key_path="measured_tokens_per_second",
            hint="tokens per second of the whole run, e.g. --measured-tokens-per-second 12000",
        )
    factor = measured_tokens_per_s / estimated
    if not 1 / MAX_FACTOR <= factor <= MAX_FACTOR:
        if step_tokens is not None:  # measured as seconds per step: refused in those terms
            unit = "tokens" if spec.model.is_transformer else "samples"
            raise ConfigError(
                f"the measured {step_tokens / measured_tokens_per_s:,.4g} s per optimizer step "
                f"({_rate(measured_tokens_per_s)} {unit}/s at the global batch of "
                f"{step_tokens:,.0f} {unit}) is {factor:.3g}x as fast as the estimate's "
                f"{step_tokens / estimated:,.4g} s: more than {MAX_FACTOR:g}x apart",
                key_path="measured_step_seconds",
                hint="give the seconds one optimizer step of the workload's global batch took "
                + (
                    "(training.global_batch_tokens), or the run's tokens per second instead"
                    if spec.model.is_transformer
                    else "(training.global_batch_samples), or the run's samples per second instead"
                ),
            )
        raise ConfigError(
            f"the measured {_rate(measured_tokens_per_s)} tokens/s is {factor:.3g}x the "
            f"estimate's {_rate(estimated)}: more than {MAX_FACTOR:g}x apart",
            key_path="measured_tokens_per_second",
            hint="give the throughput of the whole run (all GPUs), in tokens per second",
        )
    if step_tokens is None:  # a rate, which may be one GPU's (a step's time is the run's)
        _check_not_one_gpus(est, measured_tokens_per_s, estimated)
    _check_below_peak(spec, est, factor, measured_tokens_per_s)
    gpu, framework, precision, method, kind = job_key(spec, est.gpu)
    # ids this planner gives are c1, c2, ...; a hand-edited id of another shape (x5, C5, c²) takes
    # no part in the numbering
    numbered = (re.fullmatch(r"c([0-9]+)", c.id) for c in existing)
    number = 1 + max((int(m.group(1)) for m in numbered if m is not None), default=0)
    return Calibration(
        id=f"c{number}",
        recorded_on=today,
        workload=spec.name,
        gpu=gpu,
        count=est.gpu_count,
        precision=precision,
        framework=framework,
        method=method,
        kind=kind,
        measured_tokens_per_s=float(measured_tokens_per_s),
        estimated_tokens_per_s=estimated,
        estimator_revision=ESTIMATOR_REVISION,
    )


def with_recorded(
    calibrations: Sequence[Calibration], record: Calibration
) -> tuple[tuple[Calibration, ...], Calibration]:
    """(``calibrations`` with ``record`` added, the record as kept): where the same measurement of
    the same job is already recorded against this estimator (a repeated ``calibrate record``),
    ``record`` takes its place and its id, re-dated.  Was a second copy, c1 and c2 alike in
    everything but the id, listed twice and removed one at a time."""
    for i, old in enumerate(calibrations):
        if _same_measurement(old, record):
            kept = replace(record, id=old.id)
            return (*calibrations[:i], kept, *calibrations[i + 1 :]), kept
    return (*calibrations, record), record


def _same_measurement(a: Calibration, b: Calibration) -> bool:
    """Whether two records hold one measured run: everything but the id and the date alike, the
    throughputs to a part in a billion (a float read back from YAML)."""
    if (a.workload, a.gpu, a.count, a.framework, a.precision, a.method, a.kind) != (
        b.workload,
        b.gpu,
        b.count,
        b.framework,
        b.precision,
        b.method,
        b.kind,
    ) or a.estimator_revision != b.estimator_revision:
        return False
    return math.isclose(a.measured_tokens_per_s, b.measured_tokens_per_s, rel_tol=1e-9) and (
        math.isclose(a.estimated_tokens_per_s, b.estimated_tokens_per_s, rel_tol=1e-9)
    )


def without(calibrations: Sequence[Calibration], ident: str) -> tuple[Calibration, ...]:
    """``calibrations`` less the one named ``ident`` (UnknownNameError with the ids otherwise)."""
    if not isinstance(ident, str):
        raise ConfigError(
            f"expected a calibration id (text such as 'c1'), got {ident!r}",
            key_path="id",
            hint="planner calibrate list (planner.calibrations()) shows the ids",
        )
    if not ident.strip():
        # was "unknown calibration ''", as if a blank were a misspelt id
        raise ConfigError(
            "calibration id is blank",
            key_path="id",
            hint="give the id of one recorded run, e.g. c1 (planner calibrate list shows them)",
        )
    if not calibrations:
        error = UnknownNameError("calibration", ident, (), key_path="id")
        error.hint = (
            "no runs are recorded: planner calibrate record WORKLOAD --gpu G ... records one"
        )
        raise error
    if ident not in {c.id for c in calibrations}:
        error = UnknownNameError("calibration", ident, [c.id for c in calibrations], key_path="id")
        same = [c.id for c in calibrations if c.id.lower() == ident.strip().lower()]
        if len(same) == 1:
            # C1: was "did you mean c1 or c2?", as if either could be meant; a removal takes the id
            # as written, so the one it names in another case is the fix
            error.hint = (
                f"did you mean {same[0]}? (ids are written as `planner calibrate list` shows)"
            )
            error.suggestions = same
        else:
            error.hint = _ids_hint(calibrations, ident.strip())
        raise error
    return tuple(c for c in calibrations if c.id != ident)


def _ids_hint(calibrations: Sequence[Calibration], typed: str) -> str:
    """The fix for an id that names no recorded run: the runs of the workload or GPU ``typed``
    names, where it names one (a removal takes the id, not the workload), else every run, each as
    its id and what it was (was: "known calibration names: c1, c2", ids that say nothing)."""

    def shown(c: Calibration) -> str:
        return f"{c.id} ({c.workload} on {c.count} x {c.gpu}, recorded {c.recorded_on})"

    low = typed.lower()
    named = [c for c in calibrations if low in (c.workload.lower(), c.gpu.lower())]
    if named:
        runs = ", ".join(shown(c) for c in named)
        return f"remove takes a run's id: {typed}'s recorded runs are {runs}"
    by_id = {c.id: c for c in calibrations}
    close = suggest(typed, by_id, 2)
    if close:
        return "did you mean " + " or ".join(shown(by_id[i]) for i in close) + "?"
    listed = ", ".join(shown(c) for c in calibrations[:8])
    more = f" and {len(calibrations) - 8} more" if len(calibrations) > 8 else ""
    return f"recorded runs: {listed}{more} (planner calibrate list shows them all)"


def recency(c: Calibration) -> tuple[str, int, str]:
    """How recent a recorded run is: its date, then its number (c10 after c9, which text order
    puts first), then its id; of the runs that match an estimate, the most recent applies."""
    numbered = re.fullmatch(r"c([0-9]+)", c.id)
    return (c.recorded_on, int(numbered.group(1)) if numbered else -1, c.id)


def calibrated(spec: WorkloadSpec, est: Estimate, calibrations: Sequence[Calibration]) -> Estimate:
    """``est`` with its training steps scaled by the most recent matching calibration (itself
    when none matches or the estimate does not run)."""
    if not calibrations or not est.fits or "training steps" not in est.time_breakdown_hours:
        return est
    key = job_key(spec, est.gpu)
    runs = [c for c in calibrations if c.matches(key)]
    matches = [c for c in runs if c.applies]
    if not matches:
        if not runs:
            return est
        old = max(runs, key=recency)
        which = (
            # a hand edit or a newer planner's file: was called "an earlier version" too
            f"a newer version of the estimate (revision {old.estimator_revision}; this planner's "
            f"is {ESTIMATOR_REVISION})"
            if old.estimator_revision > ESTIMATOR_REVISION
            else "an earlier version of the estimate"
        )
        note = (
            f"not calibrated: your run of {old.recorded_on} ({old.id}) was measured against "
            f"{which}, so its factor no longer applies; record it again (planner calibrate "
            "record) to use it"
        )
        return replace(est, assumptions=(*est.assumptions, note))
    cal = max(matches, key=recency)
    phases = dict(est.time_breakdown_hours)
    bounds = est.step_bounds
    if bounds is None:
        steps = phases["training steps"] / cal.factor
        scaled = "training steps"
    else:
        # the factor corrects the GPU's work; the CPU data loader's floor under the steps stays
        bounds = replace(bounds, gpu_hours=bounds.gpu_hours / cal.factor)
        steps = max(bounds.gpu_hours, bounds.loader_hours)
        scaled = "the training steps' GPU work"
        if bounds.loader_binds:
            scaled += " (the steps then wait on the data loader)"
    old_steps = phases["training steps"]
    phases["training steps"] = steps
    if old_steps > 0 and PAUSES_PHASE in phases:
        # what a whole run loses to pauses is a share of its steps' time (efficiency.run_time_losses)
        phases[PAUSES_PHASE] *= steps / old_steps
    wall = sum(phases.values())
    scale = wall / est.wall_hours if est.wall_hours > 0 else 1.0
    note = (
        f"calibrated from your run of {cal.recorded_on} ({cal.id}: {cal.workload} on {cal.count} x "
        f"{cal.gpu}, {cal.framework}, {cal.precision}): {scaled} x{1 / cal.factor:.2f}"
    )
    span = est.wall_hours_range
    return replace(
        est,
        wall_hours=wall,
        gpu_hours=wall * est.gpu_count,
        efficiency=est.efficiency / scale if scale > 0 else est.efficiency,
        goodput=steps / wall if wall > 0 else est.goodput,
        time_breakdown_hours=phases,
        wall_hours_range=(span[0] * scale, span[1] * scale) if span else None,
        assumptions=(*est.assumptions, note),
        step_bounds=bounds,
    )
