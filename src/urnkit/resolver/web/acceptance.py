"""The acceptance rule at the API's boundary: the parsed JSON body of every route that takes
one is checked (:func:`~urnkit.resolver.domain.check_json`) after the route's own dependencies
(the bearer token: 401 and 403 come first) and before the body's model, so that nothing the
databases could not give back exactly reaches a service or a model's error message."""

from collections.abc import Iterable

from fastapi import Depends, Request
from fastapi.dependencies.utils import get_parameterless_sub_dependant
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute

from urnkit.resolver.domain import check_json


async def acceptable_body(request: Request) -> None:
    """Refuse (422) a JSON body holding what :func:`check_json` refuses; pointers are relative
    to the body. FastAPI parsed a JSON body (``application/json`` or ``…+json``) already and
    kept it; any other body is left to the route's model to refuse."""
    media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    json_body = media_type == "application/json" or (
        media_type.startswith("application/") and media_type.endswith("+json")
    )
    if json_body and await request.body():
        check_json(await request.json(), ("body",), document=1)


def check_bodies(routes: Iterable[BaseRoute]) -> None:
    """Have every route with a JSON body run :func:`acceptable_body` after its dependencies
    (once, however many applications are made over the same routes)."""
    for route in routes:
        if not isinstance(route, APIRoute) or route.body_field is None:
            continue
        if all(d.call is not acceptable_body for d in route.dependant.dependencies):
            route.dependant.dependencies.append(
                get_parameterless_sub_dependant(
                    depends=Depends(acceptable_body), path=route.path_format
                )
            )
