"""Adapters wired to recorded fixtures instead of the network (shared by the provider tests).

Each ``*_provider()`` builds a real adapter whose SDK clients answer from ``tests/fixtures/<cloud>/``:
AWS through botocore's Stubber (the real client, its paginators and its response validation), GCP
and Azure through their real SDK/HTTP code paths against :class:`FakeHttpServer` on 127.0.0.1.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pandas as pd

from planner.errors import ProviderError
from planner.gpu_specs import load_gpu_catalog
from planner.providers.base import FetchResult, Provider
from planner.schema import empty_offers, validate_offers

FIXTURES = Path(__file__).parent / "fixtures"
FROZEN = datetime(2025, 6, 2, 12, 0, tzinfo=timezone.utc)


def frozen_clock() -> datetime:
    return FROZEN


def load(cloud: str, name: str) -> Any:
    return json.loads((FIXTURES / cloud / name).read_text(encoding="utf-8"))


# ---------------------------------------------------------------- local HTTP server


@dataclass
class Reply:
    status: int = 200
    body: bytes | str | Any = b""
    headers: dict[str, str] = field(default_factory=dict)

    def payload(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode()
        return json.dumps(self.body).encode()


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]


Route = Callable[[Seen], Reply]


class FakeHttpServer:
    """A tiny HTTP server on 127.0.0.1: routes by path prefix, records every request.

    A route is either a function of the request or a list of replies served in order (the last one
    repeats), which is how throttling (429 then 200) and 5xx sequences are scripted.
    """

    def __init__(self, *, error_retry_after: str | None = "0") -> None:
        # planner.providers.http retries 429 and 5xx, waiting what Retry-After says: error
        # replies carry ``error_retry_after`` (unless scripted with their own) so that tests
        # replaying failures do not sleep through the real backoff; None sends none.
        self.error_retry_after = error_retry_after
        self.routes: list[tuple[str, Route]] = []
        self.seen: list[Seen] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                req = Seen(self.command, parts.path, parse_qs(parts.query), dict(self.headers))
                server.seen.append(req)
                reply = server._dispatch(req)
                data = reply.payload()
                self.send_response(reply.status)
                headers = {"Content-Type": "application/json", **reply.headers}
                retried = reply.status == 429 or reply.status >= 500
                if retried and server.error_retry_after is not None:
                    headers.setdefault("Retry-After", server.error_retry_after)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = _serve
            do_POST = _serve

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def route(self, prefix: str, handler: Route | list[Reply]) -> None:
        if isinstance(handler, list):
            queue = list(handler)

            def scripted(_: Seen) -> Reply:
                return queue.pop(0) if len(queue) > 1 else queue[0]

            self.routes.insert(0, (prefix, scripted))
        else:
            self.routes.insert(0, (prefix, handler))

    def _dispatch(self, req: Seen) -> Reply:
        for prefix, handler in self.routes:
            if req.path.startswith(prefix):
                return handler(req)
        return Reply(404, {"error": f"no fixture for {req.path}"})

    def hits(self, prefix: str) -> list[Seen]:
        return [s for s in self.seen if s.path.startswith(prefix)]

    def __enter__(self) -> FakeHttpServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def serving() -> Iterator[FakeHttpServer]:
    with FakeHttpServer() as server:
        yield server


# ---------------------------------------------------------------- AWS


def _spot_rows(page: dict[str, Any]) -> dict[str, Any]:
    rows = [
        {**r, "Timestamp": datetime.fromisoformat(r["Timestamp"])} for r in page["SpotPriceHistory"]
    ]
    return {**page, "SpotPriceHistory": rows}


def _price_page(page: dict[str, Any]) -> dict[str, Any]:
    # The API returns each PriceList item as a JSON *string*; the fixture keeps them readable.
    return {**page, "PriceList": [json.dumps(item) for item in page["PriceList"]]}


@dataclass
class AwsStubs:
    """Real boto3 clients with botocore Stubbers queued from the fixtures."""

    clients: dict[tuple[str, str], Any]
    stubbers: list[Any]

    def factory(self, service: str, region: str) -> Any:
        return self.clients[(service, region)]

    def assert_all_used(self) -> None:
        for stubber in self.stubbers:
            stubber.assert_no_pending_responses()


def boto_client(service: str, region: str, **kwargs: Any) -> Any:
    import boto3

    return boto3.client(
        service,
        region_name=region,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        **kwargs,
    )


def aws_stubs(
    region: str = "us-east-1",
    *,
    price_pages: list[dict[str, Any]] | None = None,
    pricing_client: Any = None,
) -> AwsStubs:
    from botocore.stub import ANY, Stubber

    ec2 = boto_client("ec2", region)
    pricing = boto_client("pricing", "us-east-1")
    s_ec2, s_pr = Stubber(ec2), Stubber(pricing)
    types = load("aws", f"describe_instance_types_{region}.json")
    for i, page in enumerate(types):
        params: dict[str, Any] = {"MaxResults": 100}
        if i:
            params["NextToken"] = types[i - 1]["NextToken"]
        s_ec2.add_response("describe_instance_types", page, params)
    for page in load("aws", f"describe_instance_type_offerings_{region}.json"):
        s_ec2.add_response(
            "describe_instance_type_offerings",
            page,
            {"LocationType": "availability-zone", "Filters": ANY},
        )
    spot = load("aws", f"describe_spot_price_history_{region}.json")
    for i, page in enumerate(spot):
        params = {"InstanceTypes": ANY, "ProductDescriptions": ["Linux/UNIX"], "StartTime": FROZEN}
        if i:
            params["NextToken"] = spot[i - 1]["NextToken"]
        s_ec2.add_response("describe_spot_price_history", _spot_rows(page), params)
    pages = price_pages if price_pages is not None else load("aws", f"get_products_{region}.json")
    for i, page in enumerate(pages):
        params = {
            "ServiceCode": "AmazonEC2",
            "Filters": ANY,
            "FormatVersion": "aws_v1",
            "MaxResults": 100,
        }
        if i:
            params["NextToken"] = pages[i - 1]["NextToken"]
        s_pr.add_response("get_products", _price_page(page), params)
    s_ec2.activate()
    if pricing_client is not None:  # a real client, e.g. pointed at a FakeHttpServer
        return AwsStubs({("ec2", region): ec2, ("pricing", "us-east-1"): pricing_client}, [s_ec2])
    s_pr.activate()
    return AwsStubs({("ec2", region): ec2, ("pricing", "us-east-1"): pricing}, [s_ec2, s_pr])


def aws_provider(region: str = "us-east-1") -> Any:
    from planner.providers.aws import AwsProvider

    stubs = aws_stubs(region)
    return AwsProvider(client_factory=stubs.factory, clock=frozen_clock)


# ---------------------------------------------------------------- GCP

GCP_MACHINE_TYPES = "/compute/v1/projects/demo-project/aggregated/machineTypes"
GCP_SKUS = "/v1/services/6F81-5844-456A/skus"


def paged(
    pages: list[Any], token_param: str = "pageToken", token_key: str = "nextPageToken"
) -> Route:
    """Serve ``pages`` by their page token, the way the Google APIs page."""

    def serve(req: Seen) -> Reply:
        token = (req.query.get(token_param) or [""])[0]
        if not token:
            return Reply(200, pages[0])
        for i, page in enumerate(pages[:-1]):
            if page.get(token_key) == token:
                return Reply(200, pages[i + 1])
        return Reply(400, {"error": {"code": 400, "message": f"bad page token {token}"}})

    return serve


def gcp_routes(server: FakeHttpServer) -> None:
    server.route(GCP_MACHINE_TYPES, paged(load("gcp", "machine_types_aggregated.json")))
    server.route(GCP_SKUS, paged(load("gcp", "skus_compute_engine.json")))


def gcp_fast_retry() -> Any:
    from google.api_core import exceptions, retry

    predicate = retry.if_exception_type(
        exceptions.TooManyRequests, exceptions.ServiceUnavailable, exceptions.InternalServerError
    )
    return retry.Retry(
        predicate=predicate, initial=0.001, maximum=0.001, multiplier=1.0, timeout=0.3
    )


def gcp_provider_at(url: str) -> Any:
    """A GcpProvider whose real REST clients talk to ``url``."""
    from google.api_core.client_options import ClientOptions
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import billing_v1, compute_v1

    from planner.providers.gcp import GcpProvider

    options = ClientOptions(api_endpoint=url)
    machine_types = compute_v1.MachineTypesClient(
        credentials=AnonymousCredentials(), transport="rest", client_options=options
    )
    skus = billing_v1.CloudCatalogClient(
        credentials=AnonymousCredentials(), transport="rest", client_options=options
    )
    return GcpProvider(
        project="demo-project",
        machine_types_client=machine_types,
        catalog_client=skus,
        retry=gcp_fast_retry(),
        clock=frozen_clock,
    )


# ---------------------------------------------------------------- Azure

AZURE_SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"
AZURE_SKUS = f"/subscriptions/{AZURE_SUBSCRIPTION}/providers/Microsoft.Compute/skus"
# The Retail Prices API and the Azure providers built on these: tests/public_api_fakes.py


class FakeAzureCredential:
    """What azure-core's bearer-token policy needs: ``get_token`` (never a real secret)."""

    def get_token(self, *scopes: str, **kwargs: Any) -> Any:
        from azure.core.credentials import AccessToken

        return AccessToken("fake-token", 4_102_444_800)


def azure_sku_route(server: FakeHttpServer) -> Route:
    pages = load("azure", "resource_skus_eastus.json")

    def serve(req: Seen) -> Reply:
        if "$skiptoken" in req.query:
            return Reply(200, pages[1])
        link = pages[0]["nextLink"].replace("NEXT", server.url + AZURE_SKUS)
        return Reply(200, {**pages[0], "nextLink": link})

    return serve


def after(replies: list[Reply], handler: Route) -> Route:
    """Serve ``replies`` first (throttling, errors), then hand every request to ``handler``."""
    queue = list(replies)

    def serve(req: Seen) -> Reply:
        return queue.pop(0) if queue else handler(req)

    return serve


# ---------------------------------------------------------------- a table-backed provider


def offer_row(region: str, instance_type: str, price: float, **kw: Any) -> dict[str, Any]:
    """One offer in the common schema (an A100-80GB x8 unless overridden)."""
    row: dict[str, Any] = {
        "provider": "aws",
        "region": region,
        "instance_type": instance_type,
        "gpu_model": "A100-80GB",
        "gpu_count": 8,
        "gpu_memory_gib": 80.0,
        "interconnect": "nvswitch",
        "fabric": "efa",
        "price_on_demand_usd_per_hour": price,
        "price_basis_reserved": "none",
        "source": "test",
        "as_of": "2025-06-02",
    }
    if "gpu_model" in kw and "gpu_memory_gib" not in kw:  # the part's own memory
        row["gpu_memory_gib"] = load_gpu_catalog().resolve(str(kw["gpu_model"])).memory_gib
    return {**row, **kw}


class TableProvider(Provider):
    """A Provider serving prepared rows per region; ``fail`` regions raise ProviderError.

    ``before_fetch`` runs at the start of every fetch (a barrier for the concurrency tests).
    """

    source = "test:table"

    def __init__(
        self,
        rows: dict[str, list[dict[str, Any]]],
        *,
        name: str = "aws",
        fail: dict[str, str] | None = None,
        before_fetch: Callable[[], Any] | None = None,
    ) -> None:
        self.name = name
        self.rows = rows
        self.fail = fail or {}
        self.before_fetch = before_fetch

    def fetch(self, regions: Sequence[str]) -> FetchResult:
        if self.before_fetch is not None:
            self.before_fetch()
        for region in regions:
            if region in self.fail:
                raise ProviderError(self.fail[region])
        records = [r for region in regions for r in self.rows.get(region, [])]
        if not records:
            return FetchResult(empty_offers())
        return FetchResult(validate_offers(pd.DataFrame.from_records(records)))
