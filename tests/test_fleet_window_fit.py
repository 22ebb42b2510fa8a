"""A serving fleet's fit check counts a request's KV cache as the estimate does
(``Replica.request_kv_tokens``: each beam's own output, a sliding-window layer's window only), so a
replica the estimate serves is not left out of the fleets, nor one it cannot serve put in."""

from __future__ import annotations

from planner.gpu_specs import resolve_gpu
from planner.optimize import fleet
from planner.schema import Fabric, Interconnect
from planner.workload import parse_workload
from planner.workload.estimate_types import Topology, topology_links
from planner.workload.inference import make_replica, service_lengths
from planner.workload.spec import ServingSlo, WorkloadSpec

A6000 = resolve_gpu("RTXA6000")


def _gpt_oss_20b(prompt: int) -> WorkloadSpec:
    return parse_workload(
        {
            "name": "w",
            "kind": "inference",
            "model": {"preset": "gpt-oss-20b", "seq_len": 131072},
            "inference": {
                "tokens_per_s": 100,
                "hours": 1,
                "prompt_tokens": prompt,
                "output_tokens": 1000,
            },
        }
    )


def test_the_fleet_fits_a_windowed_request_by_its_windowed_kv_cache() -> None:
    # gpt-oss-20b in bf16 on one RTX A6000 leaves KV cache for ~67,000 whole-model tokens; a
    # 100,000 + 1,000-token request holds 101,000 on its 12 full layers and 128 on its 12
    # windowed ones: ~50,600, which fits (the fleet had passed the raw 101,000 once fits() no
    # longer windowed it a second time)
    spec = _gpt_oss_20b(100_000)
    topo = Topology(gpus_per_node=1, interconnect=Interconnect.PCIE, fabric=Fabric.ETHERNET)
    r = make_replica(spec, A6000, 1, topology_links(A6000, topo, 1))
    prompt, output = service_lengths(spec)
    held = r.request_kv_tokens(prompt.p95, output.p95)
    pool = r.kv_pool_bytes_per_gpu / r.kv_bytes_per_token_per_gpu
    assert held < pool < prompt.p95 + output.p95
    shapes = fleet._shape_limits(spec, A6000, 1, Interconnect.PCIE, ServingSlo())
    assert [s.tp for s in shapes] == [1]


def test_the_fleet_counts_each_beams_output() -> None:
    # beam search: 8 beams each hold their own 2,000 generated tokens beside the shared prompt;
    # the fleet had checked the prompt + one output only, so it fitted a replica that cannot hold
    # one request (inference refuses it: max_concurrency 0)
    def spec(beams: int) -> WorkloadSpec:
        return parse_workload(
            {
                "name": "w",
                "kind": "inference",
                "model": {"preset": "llama-2-7b", "seq_len": 4096},
                "inference": {
                    "tokens_per_s": 100,
                    "hours": 1,
                    "prompt_tokens": 2000,
                    "output_tokens": 2000,
                    "beam_width": beams,
                    "framework": "tensorrt-llm",
                },
            }
        )

    gpu = resolve_gpu("L4")
    topo = Topology(gpus_per_node=1, interconnect=Interconnect.PCIE, fabric=Fabric.ETHERNET)
    r = make_replica(spec(8), gpu, 1, topology_links(gpu, topo, 1))
    prompt, output = service_lengths(spec(8))
    pool = r.kv_pool_bytes_per_gpu / r.kv_bytes_per_token_per_gpu
    assert prompt.p95 + output.p95 < pool < r.request_kv_tokens(prompt.p95, output.p95)
    assert fleet._shape_limits(spec(8), gpu, 1, Interconnect.PCIE, ServingSlo()) == []
    assert [
        s.tp for s in fleet._shape_limits(spec(1), gpu, 1, Interconnect.PCIE, ServingSlo())
    ] == [1]
