"""What machine to build: whole machines sized for the workloads and priced from a parts table (pure).

For each GPU the parts table sells (loose cards, or whole servers where GPUs are not sold alone)
and each count a platform can hold, the workload model says whether the workloads fit and how long
each run takes.  The rest of the machine is sized from what the runs need, by rules the seed
documents and the frameworks' guidance give:

* **CPU cores**: data-loader workers per GPU (4 for text, whose batches are token ids; 8 for
  images, decoded and augmented on the CPU: the PyTorch DataLoader guidance of a few workers per
  GPU, more for image pipelines), plus 2 for the training process itself.
* **Host RAM**: twice the GPUs' memory (pinned staging buffers and loading a checkpoint while the
  previous one is held), at least 32 GB; plus the optimizer states when they are offloaded to RAM
  (ZeRO-Offload keeps fp32 master weights and two Adam moments: 12 bytes per parameter), or, when
  they are offloaded to NVMe (ZeRO-Infinity), only DeepSpeed's pinned staging buffers.
* **Storage**: the dataset (text: 4 bytes per token, uint32 token ids on disk; images: ~110 KB
  each, the ImageNet JPEG mean) + the last three checkpoints (+ the NVMe swap files of offloaded
  optimizer states, 16 bytes per parameter with AdamW) + 200 GB of OS and environments,
  with 25% headroom; an NVMe drive where the loader reads faster than a SATA SSD's ~500 MB/s.
* **Power supply**: the GPUs' and CPU's rated power plus 150 W for the board, memory, drives and
  fans, with 30% headroom (the seeds' "sum of TDPs with headroom"); above 1,600 W no single ATX
  supply suffices, so two are fitted (a chassis that takes them, on a 230 V circuit).
* **Slots and lanes**: one double-width slot per GPU, and at least 8 PCIe lanes per GPU from the
  CPU (x8 Gen4 carries ~16 GB/s, enough for data-parallel gradients on one machine); more GPUs
  than a desktop CPU's lanes need a workstation platform.

The answer is a bill of materials (each part with its price, date and source), the time and
cost of each run on the machine, and a hardware file that ``quote --hardware`` and
``tco --hardware`` read.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import yaml

from planner.config.currency import FxTable, load_fx_rates
from planner.config.yamlfile import parse_packaged_yaml
from planner.errors import ConfigError, InfeasibleError, is_number, money_text
from planner.gpu_specs import GpuCatalog, GpuSpec, load_gpu_catalog
from planner.schema import Fabric, Interconnect
from planner.units import HOURS_PER_MONTH, MAX_USD
from planner.workload import WorkloadSpec
from planner.workload.efficiency import NVME_READ_GB_PER_S
from planner.workload.estimate_types import Estimate, Topology
from planner.workload.memory import (
    OFFLOAD_HOST_BYTES_PER_PARAM,
    nvme_staging_bytes,
    nvme_state_bytes_per_param,
    state_bytes,
)
from planner.workload.spec import Kind

# -- sizing rules (see the module docstring) ------------------------------------------------------
# A machine to buy gets headroom: several loader workers per GPU, the common PyTorch DataLoader
# practice (U: a planning rule, not a measurement).  A quote only refuses a host that cannot run a
# job at all and slows one that decodes too few images (optimize.host.host_need), so the two
# rules differ on purpose: one recommends, the other checks.
WORKERS_PER_GPU_TEXT = 4
WORKERS_PER_GPU_IMAGES = 8
CORES_FOR_THE_TRAINER = 2
RAM_PER_GPU_MEMORY = 2.0
MIN_RAM_GB = 32
BYTES_PER_TOKEN_ON_DISK = 4.0
BYTES_PER_IMAGE_ON_DISK = 110e3  # ImageNet-1k: ~140 GB for 1.28M training JPEGs
CHECKPOINTS_KEPT = 3
SYSTEM_DISK_GB = 200.0  # OS, CUDA, conda/pip environments and containers (U)
STORAGE_HEADROOM = 1.25  # (U)
SATA_READ_MB_PER_S = 500.0
BOARD_AND_REST_W = 150.0  # board, memory, drives and fans (U)
PSU_HEADROOM = 1.3  # the seeds' "sum of TDPs with headroom"; GPU transients exceed TDP briefly
MAX_SINGLE_PSU_W = 1600.0  # the largest ATX supplies sold (the parts table's 1,600 W row)
LANES_PER_GPU = 8
# What the machine costs to run, for the hardware file (assumptions the user should check): a
# 4-year life, 10% resale, and electricity at 0.16 USD/kWh (a US home office or small office, EIA).
LIFETIME_YEARS = 4.0
RESALE_FRACTION = 0.10
ELECTRICITY_USD_PER_KWH = 0.16
# Average draw while a run goes: GPUs at 80% of their rated power (training rarely holds the cap;
# U), the rest of the machine at its share.
GPU_AVG_DRAW = 0.8
GPU_COUNTS = (1, 2, 4, 8)


@dataclass(frozen=True)
class Part:
    """One row of the parts table, its price in USD (converted where only CNY is given)."""

    kind: str
    name: str
    price_usd: float
    price_text: str  # the price as published: "$1,799", "CNY 12,999"
    as_of: str
    source: str
    fields: Mapping[str, Any] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        return self.fields.get(key, default)


@dataclass(frozen=True)
class PartsTable:
    parts: tuple[Part, ...]
    as_of: str

    def of(self, kind: str) -> list[Part]:
        return [p for p in self.parts if p.kind == kind]


def parts_from_mapping(
    raw: Mapping[str, Any], fx: FxTable, *, file: str = "parts.yaml"
) -> PartsTable:
    """The parts table from its parsed YAML: prices in USD where given, else converted from CNY."""
    rows = raw.get("parts")
    if not isinstance(rows, list) or not rows:
        raise ConfigError("has no parts list", file=file, key_path="parts")
    parts = []
    for i, row in enumerate(rows):
        where = f"parts[{i}]"
        if not isinstance(row, Mapping) or "kind" not in row or "name" not in row:
            raise ConfigError("each part needs a kind and a name", file=file, key_path=where)
        usd, cny = row.get("price_usd"), row.get("price_cny")
        if usd is not None:
            price, text = float(usd), f"${float(usd):,.0f}"
        elif cny is not None:
            price, text = fx.to_usd(float(cny), "CNY"), f"CNY {float(cny):,.0f}"
        else:
            raise ConfigError("has no price_usd or price_cny", file=file, key_path=where)
        if not price > 0:
            raise ConfigError(f"price must be positive, got {price!r}", file=file, key_path=where)
        known = {"kind", "name", "price_usd", "price_cny", "as_of", "source"}
        parts.append(
            Part(
                kind=str(row["kind"]),
                name=str(row["name"]),
                price_usd=price,
                price_text=text,
                as_of=str(row.get("as_of", "")),
                source=str(row.get("source", "")),
                fields={k: v for k, v in row.items() if k not in known},
            )
        )
    return PartsTable(tuple(parts), str(raw.get("as_of", "")))


@functools.lru_cache(maxsize=1)
def load_parts() -> PartsTable:
    """The bundled parts table (``planner/data/parts.yaml``), read on first use."""
    text = resources.files("planner.data").joinpath("parts.yaml").read_text(encoding="utf-8")
    return parts_from_mapping(parse_packaged_yaml(text), load_fx_rates())


# -- what a machine must have ----------------------------------------------------------------------
@dataclass(frozen=True)
class HostNeeds:
    """The host a machine of ``gpus`` x ``gpu`` needs for the workloads."""

    cpu_cores: int
    ram_gb: float
    storage_gb: float
    read_mb_per_s: float
    psu_watts: float  # with headroom
    draw_watts: float  # rated draw, no headroom (the hardware file's peak power)
    gpu_slots: int
    pcie_lanes: int


def _images(spec: WorkloadSpec) -> bool:
    return not spec.model.is_transformer


def host_needs(
    runs: Sequence[tuple[WorkloadSpec, Estimate]], gpu: GpuSpec, gpus: int, cpu_tdp_w: float
) -> HostNeeds:
    """What the host of ``gpus`` x ``gpu`` needs so that every run in ``runs`` is fed, held and
    powered (the largest need over the runs)."""
    cores, ram, disk, read = 0, float(MIN_RAM_GB), 0.0, 0.0
    for spec, est in runs:
        per_gpu = WORKERS_PER_GPU_IMAGES if _images(spec) else WORKERS_PER_GPU_TEXT
        cores = max(cores, gpus * per_gpu + CORES_FOR_THE_TRAINER)
        need = RAM_PER_GPU_MEMORY * gpus * gpu.memory_gib
        ram_offload, swap_gb = _offload_needs(spec, gpus)
        ram = max(ram, need + ram_offload)
        dataset, rate = _dataset(spec, est)
        disk = max(
            disk,
            dataset + CHECKPOINTS_KEPT * est.checkpoint_gib * 1.074 + swap_gb + SYSTEM_DISK_GB,
        )
        if swap_gb > 0:  # every step reads the swap files back: NVMe, at the workload's rate
            train = spec.train
            rate = max(rate, (train.nvme_read_gb_per_s or NVME_READ_GB_PER_S) * 1000.0)
        read = max(read, rate)
    draw = gpus * gpu.tdp_w + cpu_tdp_w + BOARD_AND_REST_W
    return HostNeeds(
        cpu_cores=cores,
        ram_gb=ram,
        storage_gb=disk * STORAGE_HEADROOM,
        read_mb_per_s=read,
        psu_watts=draw * PSU_HEADROOM,
        draw_watts=draw,
        gpu_slots=gpus,
        pcie_lanes=gpus * LANES_PER_GPU,
    )


def _offload_needs(spec: WorkloadSpec, gpus: int) -> tuple[float, float]:
    """(GB of host RAM, GB of NVMe swap files) a full training run's offloaded optimizer states
    take on a machine of ``gpus`` GPUs: ``offload: optimizer`` keeps them in RAM (12 bytes per
    parameter); ``offload: nvme`` keeps them, the fp32 master weights and gradients in swap files
    on the machine's NVMe (16 bytes per parameter with mixed-precision AdamW) and pins only
    DeepSpeed's staging buffers per GPU in RAM (ZeRO-3: each GPU stages its share)."""
    train = spec.training
    if train is None or train.method.value != "full" or train.offload == "none":
        return 0.0, 0.0
    params = float(spec.model.params or 0.0)
    if train.offload == "optimizer":
        return OFFLOAD_HOST_BYTES_PER_PARAM * params / 1e9, 0.0
    per_param = nvme_state_bytes_per_param(
        state_bytes(spec.train.precision.value, train.optimizer.value)
    )
    return gpus * nvme_staging_bytes(params / gpus) / 1e9, per_param * params / 1e9


def _dataset(spec: WorkloadSpec, est: Estimate) -> tuple[float, float]:
    """(GB on disk, MB/s the loader reads) for one run."""
    hours = max(est.wall_hours, 1e-9)
    if spec.kind is Kind.INFERENCE or spec.data is None:
        return 0.0, 0.0
    if _images(spec):
        samples = float(spec.data.samples or 0.0) * float(spec.data.epochs or 1.0)
        size = float(spec.data.samples or 0.0) * BYTES_PER_IMAGE_ON_DISK
        return size / 1e9, samples * BYTES_PER_IMAGE_ON_DISK / (hours * 3600) / 1e6
    tokens = float(spec.data.tokens or 0.0)  # read over all epochs; the dataset is one epoch
    on_disk = tokens / float(spec.data.epochs or 1.0) * BYTES_PER_TOKEN_ON_DISK
    return on_disk / 1e9, tokens * BYTES_PER_TOKEN_ON_DISK / (hours * 3600) / 1e6


# -- assembling a machine --------------------------------------------------------------------------
@dataclass(frozen=True)
class BomLine:
    role: str  # GPU, CPU, motherboard, memory, storage, power supply, chassis, system
    part: Part
    quantity: int

    @property
    def price_usd(self) -> float:
        return self.part.price_usd * self.quantity


@dataclass(frozen=True)
class RunOnMachine:
    """One workload on the machine: whether it fits, its hours and its cost per run."""

    workload: str
    runs_per_month: float
    fits: bool
    hours: float
    cost_usd: float  # at the machine's full cost per hour (capex over its life, power)
    strategy: str


@dataclass(frozen=True)
class MachinePlan:
    name: str
    gpu: str
    gpus: int
    interconnect: Interconnect
    lines: tuple[BomLine, ...]
    needs: HostNeeds
    runs: tuple[RunOnMachine, ...]
    cost_usd_per_hour: float
    label: str = ""
    notes: tuple[str, ...] = ()

    @property
    def total_usd(self) -> float:
        return sum(line.price_usd for line in self.lines)

    @property
    def hours_per_month(self) -> float:
        return sum(r.hours * r.runs_per_month for r in self.runs)

    def hardware_yaml(self) -> str:
        """A hardware file for this machine (``quote --hardware``, ``tco --hardware``)."""
        avg_kw = (
            self.gpus * GPU_AVG_DRAW * _tdp(self) + (self.needs.draw_watts - self.gpus * _tdp(self))
        ) / 1000
        doc = {
            "name": self.name,
            "description": f"built by planner build: {self.gpus} x {self.gpu}",
            "gpu": self.gpu,
            "gpus_per_machine": self.gpus,
            "machines": 1,
            "interconnect": self.interconnect.value,
            "capex_usd": round(self.total_usd, 2),
            "lifetime_years": LIFETIME_YEARS,
            "resale_fraction": RESALE_FRACTION,
            "power_kw_avg": round(avg_kw, 3),
            "power_kw_max": round(self.needs.draw_watts / 1000, 3),
            "pue": 1.0,
            "electricity_usd_per_kwh": ELECTRICITY_USD_PER_KWH,
            "hours_available_per_day": 24,
            "source": [
                f"{line.role}: {line.quantity} x {line.part.name} {line.part.price_text} "
                f"({line.part.as_of}, {line.part.source})"
                for line in self.lines
            ]
            + [
                f"life {LIFETIME_YEARS:g} years, resale {RESALE_FRACTION:.0%}, electricity "
                f"{ELECTRICITY_USD_PER_KWH} USD/kWh: assumptions to check"
            ],
        }
        return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)


def _tdp(plan: MachinePlan) -> float:
    return load_gpu_catalog().resolve(plan.gpu).tdp_w


@dataclass(frozen=True)
class BuildResult:
    machines: tuple[MachinePlan, ...]
    budget_usd: float | None
    parts_as_of: str
    left_out: tuple[str, ...] = ()


def _cheapest(parts: Sequence[Part], ok: Any) -> Part | None:
    fitting = [p for p in parts if ok(p)]
    return min(fitting, key=lambda p: (p.price_usd, p.name)) if fitting else None


def _assemble(
    table: PartsTable,
    gpu_part: Part,
    gpu: GpuSpec,
    gpus: int,
    runs: Sequence[tuple[WorkloadSpec, Estimate]],
) -> tuple[list[BomLine], HostNeeds] | str:
    """The cheapest parts around ``gpus`` loose cards, or why there are none."""
    # the CPU sets the platform: enough cores and lanes; the board must match its socket
    best: tuple[float, list[BomLine], HostNeeds] | None = None
    why = "no CPU in the parts table has the cores and PCIe lanes"
    for cpu in table.of("cpu"):
        needs = host_needs(runs, gpu, gpus, float(cpu.get("tdp_w", 0)))
        if (
            int(cpu.get("cores", 0)) < needs.cpu_cores
            or int(cpu.get("pcie_lanes", 0)) < needs.pcie_lanes
        ):
            continue
        board = _cheapest(
            table.of("motherboard"),
            lambda b, cpu=cpu, needs=needs: (
                b.get("socket") == cpu.get("socket")
                and int(b.get("gpu_slots", 0)) >= needs.gpu_slots
                and int(b.get("lanes_per_gpu_slot", LANES_PER_GPU)) >= LANES_PER_GPU
                and float(b.get("max_memory_gb", 0)) >= needs.ram_gb
            ),
        )
        if board is None:
            most = max(
                (
                    float(b.get("max_memory_gb", 0))
                    for b in table.of("motherboard")
                    if int(b.get("gpu_slots", 0)) >= needs.gpu_slots
                ),
                default=0.0,
            )
            why = (
                f"no motherboard holds {gpus} GPUs and {needs.ram_gb:,.0f} GB of RAM "
                f"({RAM_PER_GPU_MEMORY:g} x the GPUs' memory; the parts table's boards with "
                f"{needs.gpu_slots} GPU slots take at most {most:,.0f} GB)"
                if most
                else f"no motherboard in the parts table has {needs.gpu_slots} GPU slots"
            )
            continue
        ram = _memory(table, board, needs.ram_gb)
        storage = _storage(table, needs)
        psu_count = 1 if needs.psu_watts <= MAX_SINGLE_PSU_W else 2
        psu = _cheapest(
            table.of("psu"),
            lambda p, n=needs, c=psu_count: float(p.get("watts", 0)) * c >= n.psu_watts,
        )
        chassis = _cheapest(
            table.of("chassis"), lambda c, n=needs: int(c.get("gpu_slots", 0)) >= n.gpu_slots
        )
        if ram is None or storage is None or psu is None or chassis is None:
            why = "the parts table lacks memory, storage, a power supply or a chassis that fits"
            continue
        lines = [
            BomLine("GPU", gpu_part, gpus),
            BomLine("CPU", cpu, 1),
            BomLine("motherboard", board, 1),
            ram,
            storage,
            BomLine("power supply", psu, psu_count),
            BomLine("chassis", chassis, 1),
        ]
        cost = sum(line.price_usd for line in lines)
        if best is None or cost < best[0]:
            best = (cost, lines, needs)
    if best is None:
        return why
    return best[1], best[2]


def _memory(table: PartsTable, board: Part, ram_gb: float) -> BomLine | None:
    """The cheapest packages of the board's memory type (ECC on servers) that reach ``ram_gb``
    within its slots (a package is a kit of ``modules`` modules of ``size_gb``)."""
    slots = int(board.get("memory_slots", 4))
    wanted = str(board.get("memory_type", "")).upper()
    server = board.get("platform") == "server"
    options = []
    for package in table.of("ram"):
        if wanted and str(package.get("type", "")).upper() != wanted:
            continue
        if server and not package.get("ecc", False):
            continue
        modules = int(package.get("modules", 1))
        kits = math.ceil(ram_gb / (float(package.get("size_gb", 1)) * modules))
        if kits * modules <= slots:
            options.append(BomLine("memory", package, kits))
    return min(options, key=lambda line: line.price_usd) if options else None


def _storage(table: PartsTable, needs: HostNeeds) -> BomLine | None:
    """The cheapest drives that hold the data and read it fast enough (NVMe where the loader
    reads faster than SATA; the system drive is always solid state)."""
    options = []
    for drive in table.of("storage"):
        interface = str(drive.get("interface", ""))
        if interface == "hdd":
            continue
        if needs.read_mb_per_s > SATA_READ_MB_PER_S and interface == "sata":
            continue
        count = math.ceil(needs.storage_gb / float(drive.get("capacity_gb", 1)))
        if count <= 4:
            options.append(BomLine("storage", drive, count))
    return min(options, key=lambda line: line.price_usd) if options else None


def _estimates(
    workloads: Sequence[tuple[WorkloadSpec, float]], gpu: GpuSpec, gpus: int, link: Interconnect
) -> list[tuple[WorkloadSpec, Estimate]]:
    from planner.workload import estimate

    topo = Topology(
        gpus_per_node=gpus,
        interconnect=link if gpus > 1 else Interconnect.NONE,
        fabric=Fabric.ETHERNET,
    )
    return [(spec, estimate(spec, gpu, gpus, topology=topo)) for spec, _ in workloads]


def _machine_cost_per_hour(capex_usd: float, draw_w: float, gpus: int, tdp_w: float) -> float:
    """Capex less resale over the life's hours, plus electricity at the average draw."""
    hours = LIFETIME_YEARS * 365 * 24
    avg_kw = (gpus * tdp_w * GPU_AVG_DRAW + (draw_w - gpus * tdp_w)) / 1000
    return capex_usd * (1 - RESALE_FRACTION) / hours + avg_kw * ELECTRICITY_USD_PER_KWH


# Runs a month of one workload: more than 10,000 (one every four minutes, day and night) is a
# typo or a unit slip (runs a year, tokens), and 1e9 runs a month priced a machine busy
# 7.5e9 hours of a 730-hour month.
MAX_RUNS_PER_MONTH = 10_000


def check_runs_per_month(runs: object, workload: str) -> None:
    """``runs`` a month of ``workload``: a number more than 0 and at most MAX_RUNS_PER_MONTH."""
    if not (is_number(runs) and 0 < runs <= MAX_RUNS_PER_MONTH):  # type: ignore[operator]
        raise ConfigError(
            f"{workload}: runs a month must be more than 0 and at most {MAX_RUNS_PER_MONTH:,}, "
            f"got {runs!r}",
            key_path="workloads",
            hint=f"write NAME:RUNS, e.g. {workload}:4 for four runs a month",
        )


def check_budget(budget_usd: object) -> None:
    """A machine budget: None (no limit), or a finite number of USD from 0 to MAX_USD."""
    if budget_usd is None:
        return
    if not (is_number(budget_usd) and 0 <= budget_usd <= MAX_USD):  # type: ignore[operator]
        raise ConfigError(
            f"a machine budget must be from 0 to {MAX_USD:,.0f} USD, got "
            + (_shown_usd(budget_usd) if is_number(budget_usd) else repr(budget_usd)),
            key_path="budget_usd",
            hint="give what the machine may cost, e.g. 10000 (or 80000 CNY), or leave it out "
            "for no limit",
        )


def _shown_usd(amount: Any) -> str:
    """An amount for a message: 12,000 USD, but 1e+300 USD, not its 301 digits."""
    value = float(amount)
    return f"{value:,.0f} USD" if abs(value) < 1e15 else f"{value:.3g} USD"


def build_machines(
    workloads: Sequence[tuple[WorkloadSpec, float]],
    *,
    budget_usd: float | None = None,
    gpus_allowed: Sequence[str] = (),
    gpu_counts: Sequence[int] = (),
    table: PartsTable | None = None,
    catalog: GpuCatalog | None = None,
    top: int = 5,
) -> BuildResult:
    """Machines for ``workloads`` (each with its runs per month), best first: the one that does a
    month's runs in the fewest hours within ``budget_usd``, then the others by hours.

    Raises :class:`InfeasibleError` when no machine in the budget runs every workload.
    """
    if not workloads:
        raise ConfigError("give at least one workload", key_path="workloads")
    for i, (spec, count) in enumerate(workloads):
        check_runs_per_month(count, spec.name)
        if any(earlier.name == spec.name for earlier, _ in workloads[:i]):
            # was: two rows of the same name in the plan, its runs counted twice without a word
            raise ConfigError(
                f"workload {spec.name} is given twice",
                key_path="workloads",
                hint=f"give it once with its runs a month: {spec.name}:"
                f"{sum(runs for s, runs in workloads if s.name == spec.name):g}",
            )
    check_budget(budget_usd)
    table = table or load_parts()
    catalog = catalog or load_gpu_catalog()
    allowed = {catalog.resolve(g, key_path="gpus_allowed").name for g in gpus_allowed}
    plans: list[MachinePlan] = []
    left_out: list[str] = []
    for part in table.of("gpu") + table.of("system"):
        gpu = catalog.get(str(part.get("gpu", "")))
        if gpu is None or (allowed and gpu.name not in allowed):
            continue
        counts = [int(part.get("gpus", 1))] if part.kind == "system" else list(GPU_COUNTS[:3])
        if gpu_counts:
            counts = [n for n in counts if n in gpu_counts]
        for gpus in counts:
            link = (
                Interconnect(str(part.get("interconnect", "pcie")))
                if part.kind == "system"
                else Interconnect.PCIE
            )
            runs = _estimates(workloads, gpu, gpus, link)
            if not all(est.fits for _, est in runs):
                left_out.append(f"{gpus} x {gpu.name}: a workload does not fit")
                continue
            if part.kind == "system":
                needs = host_needs(runs, gpu, gpus, 0.0)
                needs = _system_needs(part, needs)
                lines = [BomLine("system", part, 1)]
            else:
                assembled = _assemble(table, part, gpu, gpus, runs)
                if isinstance(assembled, str):
                    left_out.append(f"{gpus} x {gpu.name}: {assembled}")
                    continue
                lines, needs = assembled
            capex = sum(line.price_usd for line in lines)
            per_hour = _machine_cost_per_hour(capex, needs.draw_watts, gpus, gpu.tdp_w)
            name = f"build-{gpus}x{gpu.name.lower()}"
            plans.append(
                MachinePlan(
                    name=name,
                    gpu=gpu.name,
                    gpus=gpus,
                    interconnect=link if gpus > 1 else Interconnect.NONE,
                    lines=tuple(lines),
                    needs=needs,
                    runs=tuple(
                        RunOnMachine(
                            spec.name,
                            n,
                            est.fits,
                            est.wall_hours,
                            est.wall_hours * per_hour,
                            est.strategy.name,
                        )
                        for (spec, n), (_, est) in zip(workloads, runs, strict=True)
                    ),
                    cost_usd_per_hour=per_hour,
                )
            )
    within = [p for p in plans if budget_usd is None or p.total_usd <= budget_usd]
    if not plans and (allowed or gpu_counts):
        priced = sorted(
            {g.name for p in table.of("gpu") + table.of("system") if (g := _gpu_of(p, catalog))}
        )
        unpriced = sorted(allowed - set(priced))
        loose = max(GPU_COUNTS[:3])
        if not left_out and gpu_counts and min(gpu_counts) > loose:
            # --gpus 8 of a GPU sold loose: was "the parts table has none of them"
            systems = sorted(
                f"{int(p.get('gpus', 1))} x {p.get('gpu')}"
                for p in table.of("system")
                if int(p.get("gpus", 1)) in gpu_counts
            )
            left_out.append(
                f"{' or '.join(map(str, sorted(gpu_counts)))} GPUs are built only as whole "
                f"servers (the parts table's: {', '.join(systems)}), and loose cards go at most "
                f"{loose} to a machine"
            )
        raise InfeasibleError(
            "no machine of the GPUs and counts asked for runs every workload: "
            + (
                "; ".join(dict.fromkeys(left_out))
                or (
                    f"the parts table prices no {' or '.join(unpriced)}"
                    if unpriced
                    else "the parts table has none of them"
                )
            ),
            hint=f"the parts table prices {', '.join(priced)}: pick those with --gpu, or rent "
            "(planner quote)"
            if unpriced
            else "allow other GPUs (--gpu) or counts (--gpus)",
        )
    if not plans:
        raise InfeasibleError(
            "no machine from the parts table runs every workload: "
            + ("; ".join(left_out[-3:]) or "it sells none of the GPUs they need"),
            hint="rent instead (planner quote shows the cloud's cost), or split the workloads",
        )
    # a machine busier than a month has hours cannot run the month's runs (was "runs them" at
    # 886 h of runs a month, a Jetson at 1.7 million): one machine is built, so it must keep up
    in_time = [p for p in within if p.hours_per_month <= HOURS_PER_MONTH * (1 + 1e-9)]
    if within and not in_time:
        quickest = min(within, key=lambda p: p.hours_per_month)
        raise InfeasibleError(
            f"no machine within the budget runs the workloads in a month: the fastest, "
            f"{quickest.gpus} x {quickest.gpu} ({money_text(quickest.total_usd)}), needs "
            f"{quickest.hours_per_month:,.1f} h of runs a month, and a month has "
            f"{HOURS_PER_MONTH:,.0f}",
            hint="give fewer runs a month (WORKLOAD:RUNS), raise --budget for a faster machine, "
            "or rent the rest: planner quote shows what the cloud would cost",
        )
    within = in_time
    if not within:
        cheapest = min(plans, key=lambda p: p.total_usd) if plans else None
        detail = (
            f"the cheapest machine that runs them costs {money_text(cheapest.total_usd)} "
            f"({cheapest.gpus} x {cheapest.gpu})"
            if cheapest
            else "no machine from the parts table runs them"
        )
        raise InfeasibleError(
            f"no machine within the budget runs every workload: {detail}",
            hint="raise --budget, or rent: planner quote shows what the cloud would cost",
        )
    within.sort(key=lambda p: (p.hours_per_month, p.total_usd))
    fastest = within[0]
    cheapest = min(within, key=lambda p: (p.total_usd, p.hours_per_month))
    if budget_usd is not None:  # the budget is what may be spent: the fastest machine within it
        chosen = [_label(fastest, "fastest within the budget")]
        if cheapest is not fastest:
            chosen.append(_label(cheapest, "cheapest that runs them"))
    else:  # no budget: the cheapest machine first, the fastest as the alternative
        chosen = [_label(cheapest, "cheapest that runs them")]
        if fastest is not cheapest:
            chosen.append(_label(fastest, "fastest"))
    chosen += [p for p in within if p is not fastest and p is not cheapest][
        : max(top - len(chosen), 0)
    ]
    return BuildResult(tuple(chosen), budget_usd, table.as_of, tuple(left_out))


def _gpu_of(part: Part, catalog: GpuCatalog) -> GpuSpec | None:
    """The catalog GPU a parts-table row (a card or a whole system) holds."""
    return catalog.get(str(part.get("gpu", "")))


def _label(plan: MachinePlan, label: str) -> MachinePlan:
    from dataclasses import replace

    return replace(plan, label=label)


def _system_needs(part: Part, needs: HostNeeds) -> HostNeeds:
    """A whole server brings its own host: its power is what its maker rates."""
    from dataclasses import replace

    kw = float(part.get("power_kw", needs.draw_watts / 1000))
    return replace(needs, draw_watts=kw * 1000, psu_watts=kw * 1000)
