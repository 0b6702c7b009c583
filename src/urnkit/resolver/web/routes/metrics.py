"""``GET /metrics``: the server's counters in the Prometheus text exposition format."""

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST

from urnkit.resolver.web.metrics import Metrics

router = APIRouter(include_in_schema=False)


@router.get("/metrics")
def prometheus(request: Request) -> Response:
    """The Prometheus text exposition format."""
    metrics: Metrics = request.app.state.metrics
    return Response(metrics.exposition(), media_type=CONTENT_TYPE_LATEST)
