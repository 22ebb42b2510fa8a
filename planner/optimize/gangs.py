"""The offers as columns read by position, and the gangs that fit each offer shape.

An offer's shape is what the workload model sees of it (GPU model, GPUs per instance,
interconnect, fabric and its speed): the model runs once per shape and gang size
(:func:`planner.optimize.candidates.build_candidates`), and each offer is then paired with its
shape's fitting gangs by position (:func:`pair_with_gangs`) rather than by DataFrame merges, which
copy every column of the wide offers table.  Candidate building and the exclusions
(:mod:`planner.optimize.exclusions`) share these arrays; :func:`host_suffices` checks each pair
against the offer's host (:mod:`planner.optimize.host`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from planner.gpu_specs import GpuCatalog
from planner.optimize.host import HostNeed, cpu_suffices, disk_suffices, host_need, ram_suffices
from planner.workload import Estimate, WorkloadSpec

# The columns an offer's shape is made of (:func:`_shape_key`).
SHAPE_COLUMNS = ("gpu_model", "gpu_count", "interconnect", "fabric", "network_gbps")


def _shape_key(row: Mapping[Any, Any]) -> tuple[Any, ...]:
    """What the workload model sees of an offer (NaN bandwidth -> None so keys compare equal)."""
    gbps = row["network_gbps"]
    return (
        row["gpu_model"],
        int(row["gpu_count"]),
        row["interconnect"],
        row["fabric"],
        None if gbps is None or gbps != gbps else float(gbps),
    )


def _records(frame: pd.DataFrame, columns: Sequence[str]) -> list[dict[str, Any]]:
    """The rows of ``frame`` as dicts of ``columns`` alone, the values ``to_dict("records")``
    gives, read column by column: ``to_dict`` converts every column of the wide offers table,
    several times the work for the few a caller reads."""
    return [
        dict(zip(columns, values, strict=True))
        for values in zip(*(frame[c].tolist() for c in columns), strict=True)
    ]


def shape_keys(offers: pd.DataFrame) -> list[tuple[Any, ...]]:
    """:func:`_shape_key` of every row, read column-wise (much faster than row dicts)."""
    return [_shape_key(row) for row in _records(offers, SHAPE_COLUMNS)]


class OfferColumns:
    """The offers' columns as arrays, each read from the table once (on first use), with each
    offer's shape (:func:`_shape_key`) and, as ``gpu_memory_gib``, the memory a job can allocate
    (less than listed where ECC holds 1/16 back, GpuSpec.usable_memory_gib: what the fit used).

    The shapes, the priced rows and the host checks select and combine them by position, where a
    DataFrame merge, boolean selection, sort or ``assign`` copies every column of the wide offers
    table each time (the headline quote's candidates took 26 ms in those, with its estimates
    memoised, and take 13 ms by position)."""

    def __init__(
        self, offers: pd.DataFrame, shapes: list[tuple[Any, ...]], catalog: GpuCatalog
    ) -> None:
        self._frame = offers
        self.shapes = shapes
        gpus = offers["gpu_model"].tolist()
        usable = {g: catalog.resolve(str(g)).usable_memory_gib for g in dict.fromkeys(gpus)}
        self._arrays: dict[str, np.ndarray] = {
            "gpu_memory_gib (float)": np.minimum(
                offers["gpu_memory_gib"].to_numpy(dtype=float),
                np.array([usable[g] for g in gpus], dtype=float),
            )
        }

    def __getitem__(self, name: str) -> np.ndarray:
        """The column as ``to_numpy`` gives it (text as an object array)."""
        if name not in self._arrays:
            self._arrays[name] = self._frame[name].to_numpy()
        return self._arrays[name]

    def numbers(self, name: str) -> np.ndarray:
        """A numeric column as floats (NaN where the offer leaves it blank)."""
        key = f"{name} (float)"
        if key not in self._arrays:
            self._arrays[key] = self._frame[name].to_numpy(dtype=float)
        return self._arrays[key]


class GangFits(NamedTuple):
    """The fitting gangs of every offer shape, one entry per (shape, gang size) in shape order,
    with what one instance of each needs from its host (:func:`~planner.optimize.host.host_need`); the offers are joined
    to them by shape (:func:`pair_with_gangs`)."""

    shapes: list[tuple[Any, ...]]
    instances: np.ndarray  # gang sizes (instances), int64
    estimates: list[Estimate]
    needs: list[HostNeed]
    need_vcpus: np.ndarray
    need_ram_gib: np.ndarray
    need_disk_gb: np.ndarray
    images_per_s: np.ndarray
    trainer_vcpus: np.ndarray
    by_shape: dict[tuple[Any, ...], list[int]]  # the entries of each shape, in order


def gang_fits(
    spec: WorkloadSpec, shape_fits: Mapping[tuple[Any, ...], list[tuple[int, Estimate]]]
) -> GangFits:
    """:class:`GangFits` of ``shape_fits`` (per shape, the gang sizes that fit with their
    estimates)."""
    shapes = [key for key, fits in shape_fits.items() for _ in fits]
    pairs = [pair for fits in shape_fits.values() for pair in fits]
    estimates = [est for _, est in pairs]
    needs = [host_need(spec, est, int(key[1])) for key, est in zip(shapes, estimates, strict=True)]
    by_shape: dict[tuple[Any, ...], list[int]] = {}
    for j, key in enumerate(shapes):
        by_shape.setdefault(key, []).append(j)
    return GangFits(
        shapes=shapes,
        instances=np.array([n for n, _ in pairs], dtype=np.int64),
        estimates=estimates,
        needs=needs,
        need_vcpus=np.array([n.vcpus for n in needs], dtype=float),
        need_ram_gib=np.array([n.host_memory_gib for n in needs], dtype=float),
        need_disk_gb=np.array([n.local_disk_gb for n in needs], dtype=float),
        images_per_s=np.array([n.images_per_s for n in needs], dtype=float),
        trainer_vcpus=np.array([n.trainer_vcpus for n in needs], dtype=float),
        by_shape=by_shape,
    )


def pair_with_gangs(
    shapes: list[tuple[Any, ...]], at: np.ndarray, fits: GangFits
) -> tuple[np.ndarray, np.ndarray]:
    """(offer positions, fit positions) of every offer in ``at`` (positions into ``shapes``)
    paired with each fitting gang of its shape: the rows, in the order, that
    ``offers.merge(fit_table, on="_shape", how="inner")`` gives (the offers in order, each with
    its shape's gangs in order)."""
    left: list[int] = []
    right: list[int] = []
    for i in at.tolist():
        for j in fits.by_shape.get(shapes[i], ()):
            left.append(i)
            right.append(j)
    return np.array(left, dtype=np.intp), np.array(right, dtype=np.intp)


def host_suffices(
    columns: OfferColumns, offer: np.ndarray, fits: GangFits, fit: np.ndarray
) -> np.ndarray:
    """For each pair (offer at ``offer``, fitting gang at ``fit``): whether the offer's host can
    run the gang: the RAM the gang needs, the local NVMe its swapped optimizer states need
    (``offload: nvme``), and the vCPUs -- all of them for text; for images, a core left for
    loading once every GPU's trainer has one (fewer loader cores than the images need only slow
    the steps, :func:`~planner.optimize.host.loader_slowdown`).  An offer that does not state them is given the benefit
    of the doubt."""
    vcpus = columns.numbers("vcpus")[offer]
    return (
        cpu_suffices(vcpus, fits.need_vcpus[fit], fits.images_per_s[fit], fits.trainer_vcpus[fit])
        & ram_suffices(columns.numbers("host_memory_gib")[offer], fits.need_ram_gib[fit])
        & disk_suffices(columns.numbers("local_disk_gb")[offer], fits.need_disk_gb[fit])
    )


def first_of_each(*keys: np.ndarray) -> np.ndarray:
    """Positions of the first row of each distinct combination of ``keys`` (equal-length
    arrays), in order: ``drop_duplicates`` on those columns, by position."""
    seen: set[tuple[Any, ...]] = set()
    first: list[int] = []
    for i, key in enumerate(zip(*(k.tolist() for k in keys), strict=True)):
        if key not in seen:
            seen.add(key)
            first.append(i)
    return np.array(first, dtype=np.intp)
