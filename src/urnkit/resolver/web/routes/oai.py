"""``/oai``: the OAI-PMH 2.0 repository of the records (oai_dc; a set per delegated prefix)."""

from urllib.parse import parse_qsl

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from urnkit.resolver.services.oai_repository import Repository

router = APIRouter(tags=["oai-pmh"])


async def oai(request: Request) -> Response:
    """OAI-PMH 2.0 (oai_dc; a set per delegated prefix): the arguments in the query, or
    for POST in an ``application/x-www-form-urlencoded`` body. Errors are OAI-PMH's own,
    in a 200 response (OAI-PMH 2.0 §3.6)."""
    raw = await request.body() if request.method == "POST" else request.url.query.encode()
    arguments = parse_qsl(raw.decode("utf-8", "replace"), keep_blank_values=True)
    base_url = str(request.url.replace(query=""))
    repository: Repository = request.app.state.oai_repository
    document = await run_in_threadpool(repository.respond, arguments, base_url)
    return Response(document, media_type="text/xml; charset=utf-8")


for _method in ("GET", "POST"):  # an operation each: OpenAPI wants their ids unique
    router.add_api_route(
        "/oai",
        oai,
        methods=[_method],
        operation_id=f"oai_pmh_{_method.lower()}",
        response_class=Response,
        responses={200: {"content": {"text/xml": {}}, "description": "An OAI-PMH response"}},
    )
