"""``/oai``: the OAI-PMH 2.0 repository of the records (oai_dc; a set per delegated prefix)."""

import re
from urllib.parse import parse_qsl

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from urnkit.resolver.services.oai_repository import Repository
from urnkit.resolver.web.caching import REVALIDATE, validated

router = APIRouter(tags=["oai-pmh"])
_RESPONSE_DATE = re.compile(rb"<(?:\w+:)?responseDate>[^<]*</(?:\w+:)?responseDate>")


async def oai(request: Request) -> Response:
    """OAI-PMH 2.0 (oai_dc; a set per delegated prefix): the arguments in the query, or
    for POST in an ``application/x-www-form-urlencoded`` body. Errors are OAI-PMH's own,
    in a 200 response (OAI-PMH 2.0 §3.6)."""
    raw = await request.body() if request.method == "POST" else request.url.query.encode()
    arguments = parse_qsl(raw.decode("utf-8", "replace"), keep_blank_values=True)
    base_url = str(request.url.replace(query=""))
    repository: Repository = request.app.state.oai_repository
    modified = await run_in_threadpool(repository.latest_change)
    document = await run_in_threadpool(repository.respond, arguments, base_url)
    response = Response(document, media_type="text/xml; charset=utf-8")
    # The ETag leaves out the time of the response: the same answer later is the same.
    tagged = _RESPONSE_DATE.sub(b"", document)
    return validated(request, response, modified, REVALIDATE, tagged)


for _method in ("GET", "POST"):  # an operation each: OpenAPI wants their ids unique
    router.add_api_route(
        "/oai",
        oai,
        methods=[_method],
        operation_id=f"oai_pmh_{_method.lower()}",
        response_class=Response,
        responses={200: {"content": {"text/xml": {}}, "description": "An OAI-PMH response"}},
    )
