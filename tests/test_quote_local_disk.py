"""A quote whose optimizer states are swapped to local NVMe (training.offload: nvme) needs offers
with that much local disk: the swap files of the instance's ranks, 16 bytes per parameter with
mixed-precision AdamW, shared by ZeRO-3 over the gang."""

from __future__ import annotations

import pandas as pd
import pytest

from planner.catalog import OfferBook, load_offer_book
from planner.errors import InfeasibleError
from planner.gpu_specs import resolve_gpu
from planner.optimize.host import HOST_RESERVE_GIB, host_need
from planner.quoting.request import QuoteRequest
from planner.quoting.service import quote
from planner.schema import validate_offers
from planner.workload import estimate, parse_workload
from tests.conftest import offer_row

# Llama 2 7B, full fine-tune, states on NVMe: 16 x 6.74e9 = 108 GB of swap files for one GPU.
NVME_7B = {
    "name": "nvme-7b",
    "kind": "finetune",
    "model": "llama-2-7b",
    "data": {"tokens": 20.0e6},
    "training": {"method": "full", "offload": "nvme", "precision": "bf16"},
}


def _book(*rows: dict[str, object]) -> OfferBook:
    offers = validate_offers(pd.DataFrame(list(rows)))
    return OfferBook(offers=offers, sources=load_offer_book().sources)


def _one_gpu(name: str, disk_gb: float | None, price: float) -> dict[str, object]:
    return offer_row(
        instance_type=name,
        gpu_model="A100-80GB",
        gpu_count=1,
        vcpus=12.0,
        host_memory_gib=120.0,
        price_on_demand_usd_per_hour=price,
        price_spot_usd_per_hour=None,
        local_disk_gb=disk_gb,
    )


def _request(**kw: object) -> QuoteRequest:
    spec = parse_workload(NVME_7B)
    return QuoteRequest(workload=spec, deadline_hours=240, allow_spot=False, **kw)


def _swap_gb() -> float:
    params = float(parse_workload(NVME_7B).model.params or 0)
    return 16 * params / 1e9


def test_an_offer_without_the_local_nvme_is_left_out_and_the_one_with_it_runs() -> None:
    # cheaper, but 1 GB: even the largest gang (64 x 1.7 GB of swap files) does not fit
    small = _one_gpu("small-disk.1x", disk_gb=1.0, price=2.0)
    big = _one_gpu("big-disk.1x", disk_gb=2 * _swap_gb(), price=3.0)
    result = quote(_request(), book=_book(small, big))
    used = {i.instance_type for p in result.plans for i in p.items}
    assert "big-disk.1x" in used and "small-disk.1x" not in used
    assert any("local NVMe" in line for line in result.excluded)


def test_a_quote_with_no_offer_with_enough_nvme_says_why() -> None:
    small = _one_gpu("small-disk.1x", disk_gb=1.0, price=2.0)
    with pytest.raises(InfeasibleError) as err:
        quote(_request(), book=_book(small))
    text = f"{err.value.message} {err.value.hint}"
    assert "too little local NVMe" in text
    # the smallest need over the gang sizes: the largest gang's share of the swap files
    shares = {f"needs {_swap_gb() / n:,.0f} GB of local NVMe" for n in range(1, 65)}
    assert any(share in text for share in shares), text
    assert "small-disk.1x has 1" in text
    assert "--min-local-disk" in text


def test_an_offer_that_does_not_state_its_disk_gets_the_benefit_of_the_doubt() -> None:
    unknown = _one_gpu("unknown-disk.1x", disk_gb=None, price=2.0)
    result = quote(_request(), book=_book(unknown))
    assert result.plans[0].items[0].instance_type == "unknown-disk.1x"


def test_states_kept_in_ram_need_no_local_disk() -> None:
    spec = parse_workload({**NVME_7B, "training": {**NVME_7B["training"], "offload": "optimizer"}})
    small = _one_gpu("small-disk.1x", disk_gb=50.0, price=2.0)
    result = quote(
        QuoteRequest(workload=spec, deadline_hours=240, allow_spot=False), book=_book(small)
    )
    assert result.plans[0].items[0].instance_type == "small-disk.1x"


# -- a paged optimizer's states evicted to host RAM ----------------------------------------------

PAGED_7B = {
    "name": "paged-7b",
    "kind": "finetune",
    "model": "llama-2-7b",
    "data": {"tokens": 20.0e6},
    "training": {
        "method": "full",
        "precision": "pure-bf16",
        "optimizer": "paged-adamw",
        "optimizer_in_backward": True,
        "activation_checkpointing": "full",
        "global_batch_samples": 4,
        "parallelism": {"micro_batch": 4},
    },
}


def _one_a100(name: str, host_gib: float) -> dict[str, object]:
    return offer_row(
        instance_type=name,
        gpu_model="A100-40GB",
        gpu_count=1,
        vcpus=12.0,
        host_memory_gib=host_gib,
        price_on_demand_usd_per_hour=1.0,
        price_spot_usd_per_hour=None,
    )


def test_paged_states_the_gpu_cannot_hold_need_host_ram() -> None:
    # Llama 2 7B's fp32 moments, 8 x 6.74e9 = 53.9 GB, beside the ~20 GiB the job needs on a
    # 40 GiB card: the rest is evicted to host RAM, plus the 8 GiB reserve
    spec = parse_workload(PAGED_7B)
    est = estimate(spec, resolve_gpu("A100-40GB"), 1)
    spare = (40.0 - est.memory_per_gpu_gib) * 2**30
    spilled = 8 * float(spec.model.params or 0) - spare
    need = host_need(spec, est, 1).host_memory_gib
    assert need == pytest.approx(spilled / 2**30 + HOST_RESERVE_GIB)
    assert 32 < need < 256
    # so one GPU on a 32 GiB host cannot run it; two can (ZeRO-3 halves each GPU's states and
    # leaves more of its memory spare), and every plan on such hosts uses at least two
    small = _one_a100("a100-32gib", 32.0)
    result = quote(
        QuoteRequest(workload=spec, deadline_hours=24 * 30, allow_spot=False),
        book=_book(small),
    )
    assert all(i.instances >= 2 for p in result.plans for i in p.items)
    assert host_need(spec, estimate(spec, resolve_gpu("A100-40GB"), 2), 1).host_memory_gib < 32
