"""Why offers produced no candidate, and the lines a quote's "Excluded:" says it in.

One :class:`Exclusion` per offer (or owned machine) left out, with its reason: its GPU cannot
train in the workload's precision (made where candidate building filters the offers), no gang
size fits in GPU memory, its host falls short (vCPUs, host RAM, local NVMe), its quota allows no
fitting gang, or its spot interruption rate is above ``--max-interruption``.  The builders read
the arrays candidate building shares (:mod:`planner.optimize.gangs`); :func:`group_exclusions`
turns the exclusions into lines for people ("T4, L4, A10G: 24 GiB or less < 31 GiB needed").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from planner.optimize.gangs import (
    GangFits,
    OfferColumns,
    first_of_each,
    host_suffices,
    pair_with_gangs,
)
from planner.optimize.host import ram_suffices
from planner.workload import Estimate
from planner.workload.data_loader import classification_images_per_s, mosaic_images_per_s


@dataclass(frozen=True)
class Exclusion:
    """Why an offer (or owned machine) produced no candidate."""

    reason: (
        str  # memory | layout | precision | quota | spot-risk | vcpus | host-memory | local-disk
    )
    provider: str
    instance_type: str
    gpu_model: str
    detail: str
    gpu_memory_gib: float = 0.0
    need_gib: float = 0.0
    # host exclusions (vcpus, host-memory, local-disk): what the instance has and the gang needs
    host_has: float = 0.0
    host_needs: float = 0.0


def memory_exclusions(
    columns: OfferColumns,
    shape_fits: Mapping[tuple[Any, ...], list[tuple[int, Estimate]]],
    shape_best_need: Mapping[tuple[Any, ...], float],
    shape_layout: Mapping[tuple[Any, ...], str] | None = None,
) -> list[Exclusion]:
    """One exclusion per offer whose shape fits at no gang size: a memory misfit, or, where its
    instances are smaller than the pinned tensor-parallel group (``shape_layout``), a layout
    one with the reason."""
    fitting = {k for k, f in shape_fits.items() if f}
    layout = shape_layout or {}
    return [
        Exclusion(
            "layout" if key in layout else "memory",
            str(columns["provider"][i]),
            str(columns["instance_type"][i]),
            str(columns["gpu_model"][i]),
            layout.get(key, "does not fit at any size"),
            gpu_memory_gib=float(columns.numbers("gpu_memory_gib")[i]),
            need_gib=shape_best_need[key],
        )
        for i, key in enumerate(columns.shapes)
        if key not in fitting
    ]


def host_exclusions(columns: OfferColumns, fits: GangFits) -> list[Exclusion]:
    """One exclusion per offer (instance type) that fits in GPU memory at some gang size but
    whose host falls short at every one: too few vCPUs to feed its GPUs, too little RAM for the
    offloaded optimizer states, or too little local NVMe for those swapped there.  The figures
    are the smallest need over the gang sizes."""
    if not fits.shapes:
        return []
    offers = first_of_each(columns["provider"], columns["instance_type"])
    at, fit = pair_with_gangs(columns.shapes, offers, fits)
    if not len(at):
        return []
    ok = host_suffices(columns, at, fits, fit)
    out = []
    # each offer's pairs are consecutive (pair_with_gangs): [start, stop) per offer
    starts = np.flatnonzero(np.r_[True, at[1:] != at[:-1]])
    for start, stop in zip(starts.tolist(), [*starts[1:].tolist(), len(at)], strict=True):
        if ok[start:stop].any():
            continue
        i, mine = int(at[start]), fit[start:stop]
        provider, instance_type = columns["provider"][i], columns["instance_type"][i]
        vcpus, ram_has = float(columns.numbers("vcpus")[i]), columns.numbers("host_memory_gib")[i]
        least = int(mine[np.argmin(fits.need_vcpus[mine])])  # the first of the fewest
        if float(fits.need_vcpus[least]) > vcpus:
            images = float(fits.images_per_s[least])
            need = f"{float(fits.need_vcpus[least]):,.0f} vCPUs"
            why = (
                f"needs {need} to decode {images:,.0f} images/s, {instance_type} has {vcpus:g}"
                if images > 0
                else f"needs {need} for its data loaders and trainers, {instance_type} has "
                f"{vcpus:g}"
            )
            reason, has, needs = "vcpus", vcpus, float(fits.need_vcpus[least])
        elif not ram_suffices(ram_has, fits.need_ram_gib[mine]).any():
            ram = float(fits.need_ram_gib[mine].min())
            why = (
                f"needs {ram:,.0f} GiB of host RAM for the optimizer states held there, "
                f"{instance_type} has {float(ram_has):g}"
            )
            reason, has, needs = "host-memory", float(ram_has), ram
        else:
            disk = float(fits.need_disk_gb[mine].min())
            has_disk = float(columns.numbers("local_disk_gb")[i])
            why = (
                f"needs {disk:,.0f} GB of local NVMe for the optimizer states swapped there, "
                f"{instance_type} has {has_disk:g}"
            )
            reason, has, needs = "local-disk", has_disk, disk
        out.append(
            Exclusion(
                reason,
                str(provider),
                str(instance_type),
                str(columns["gpu_model"][i]),
                why,
                host_has=has,
                host_needs=needs,
            )
        )
    return out


def quota_exclusions(rows: pd.DataFrame, within: pd.Series) -> list[Exclusion]:
    """One exclusion per offer whose every fitting gang needs more instances than its quota
    allows (``--quota aws=0`` leaves no AWS offer), so that an empty result can say so."""
    if within.all():
        return []  # every row within its quota (no quota given, or none binding)
    offer = ["provider", "region", "instance_type"]
    ok = within.groupby([rows[c] for c in offer]).any()
    fewest = rows["instances"].groupby([rows[c] for c in offer]).min()
    quota = rows["quota_instances"].groupby([rows[c] for c in offer]).min()
    first = rows.drop_duplicates(offer).set_index(offer)
    return [
        Exclusion(
            "quota",
            str(key[0]),
            str(key[2]),
            str(first.loc[key, "gpu_model"]),
            f"quota {int(quota[key])} instance(s) < {int(fewest[key])} needed",
        )
        for key in ok.index[~ok.to_numpy()]
    ]


def spot_risk_exclusions(
    columns: OfferColumns, risky: np.ndarray, max_pct: float
) -> list[Exclusion]:
    """One exclusion per spot offer (at the positions ``risky``) interrupted more often than
    ``--max-interruption`` allows."""
    return [
        Exclusion(
            "spot-risk",
            str(columns["provider"][i]),
            str(columns["instance_type"][i]),
            str(columns["gpu_model"][i]),
            f"interruption above --max-interruption {max_pct:g}%",
        )
        for i in risky.tolist()
    ]


def group_exclusions(exclusions: Sequence[Exclusion]) -> list[str]:
    """Human lines: memory misfits grouped by GPU, spot-risk exclusions counted."""
    lines: list[str] = []
    memory = [e for e in exclusions if e.reason == "memory"]
    if memory:
        by_gpu: dict[str, tuple[float, float]] = {}
        for e in memory:
            by_gpu[e.gpu_model] = (e.gpu_memory_gib, e.need_gib)
        order = sorted(by_gpu, key=lambda g: by_gpu[g][0])
        top_mem = max(m for m, _ in by_gpu.values())
        need = min(n for _, n in by_gpu.values())
        lines.append(
            f"{', '.join(order)}: {top_mem:g} GiB or less per GPU < {need:.1f} GiB needed at best "
            f"(largest gang and most sharding tried)"
        )
    by_detail: dict[str, set[str]] = {}
    for e in exclusions:
        if e.reason == "precision":  # one line per fix: bf16 works on an A100, fp16 on a T4
            by_detail.setdefault(e.detail, set()).add(e.gpu_model)
    lines += [f"{', '.join(sorted(gpus))}: {detail}" for detail, gpus in by_detail.items()]
    by_layout: dict[str, set[str]] = {}
    for e in exclusions:
        if e.reason == "layout":  # instances smaller than the pinned tensor-parallel group
            by_layout.setdefault(e.detail, set()).add(e.instance_type)
    lines += [
        f"{', '.join(sorted(types)[:4])}{' and more' if len(types) > 4 else ''}: {detail}"
        for detail, types in by_layout.items()
    ]
    for reason, rule in (
        ("vcpus", _CPU_RULE),
        ("host-memory", "offloaded optimizer states take 12 bytes per parameter of host RAM"),
        (
            "local-disk",
            "optimizer states on NVMe take 16 bytes per parameter (mixed-precision AdamW)",
        ),
    ):
        short = [e for e in exclusions if e.reason == reason]
        if short:
            lines.append(_host_line(short, rule))
    risky = [e for e in exclusions if e.reason == "spot-risk"]
    if risky:
        lines.append(f"{len(risky)} spot offers: interruption rate above --max-interruption")
    return lines


# How the vCPU rule reads in a quote's "Excluded:" line.
_CPU_RULE = (
    "a CPU data loader's worker takes a core (two vCPUs) and prepares "
    f"~{classification_images_per_s():.0f} ImageNet images/s (~{mosaic_images_per_s():.0f} YOLO "
    "mosaics), and each GPU's trainer holds a vCPU; decoding on the GPU (DALI) needs fewer"
)


def _host_line(short: Sequence[Exclusion], rule: str) -> str:
    """One line for the offers a host need excluded: the nearest miss per GPU model (the most
    it has for what it needs; ties go to the cheaper need), how many instance types in all, and
    the rule."""
    by_gpu: dict[str, list[Exclusion]] = {}
    for e in short:
        by_gpu.setdefault(e.gpu_model, []).append(e)
    types = len({(e.provider, e.instance_type) for e in short})
    nearest = {
        gpu: max(found, key=lambda e: (e.host_has / max(e.host_needs, 1e-9), -e.host_needs))
        for gpu, found in by_gpu.items()
    }
    shown = [f"{gpu}: {e.detail}" for gpu, e in sorted(nearest.items())]
    return f"{'; '.join(shown)} ({types} instance type{'s' if types != 1 else ''}; {rule})"
