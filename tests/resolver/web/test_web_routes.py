"""The web layer's parts on their own: a route module imports alone, its handlers are plain
functions over a service, and a refusal's problem is what its error class says."""

from __future__ import annotations

import json
import subprocess
import sys

from fastapi import Request, Response

from urnkit.resolver.domain import PUBLIC, ResolverError
from urnkit.resolver.services import Services
from urnkit.resolver.store import Store
from urnkit.resolver.web import problems
from urnkit.resolver.web.routes import prefixes, records
from urnkit.resolver.web.schemas import RecordIn


def test_a_route_module_imports_on_its_own() -> None:
    code = "from urnkit.resolver.web.routes import records; print(records.router.routes[0].path)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "/api/v1/urns/{urn:path}/history"


def test_route_handlers_are_functions_over_the_service() -> None:
    services = Services(Store("sqlite://"))
    services.store.upgrade()
    services.admin.create_organisation("Library")
    services.admin.delegate("Library", "fi:lib")
    admin = services.access.authenticate(services.admin.create_token("Library", "admin"))
    body = RecordIn.model_validate({"locations": [{"url": "https://example.org/1"}]})
    response = Response()
    created = records.put_record("urn:nbn:fi:lib-1", body, admin, response, services)
    assert response.status_code == 201
    assert created["locations"][0]["url"] == "https://example.org/1"
    asked = Request({"type": "http", "method": "GET", "headers": []})
    found = records.get_record("URN:NBN:FI:LIB-1", services, asked, PUBLIC)
    assert json.loads(bytes(found.body))["urn"] == "urn:nbn:fi:lib-1"
    assert prefixes.list_prefixes(services) == [
        {"prefix": "fi:lib", "organisation": "Library", "generator": "sequential"}
    ]


class _TeapotError(ResolverError):
    status = 418
    problem_type = "https://example.org/problems/teapot"
    title = "I'm a teapot"


def test_a_refusal_is_answered_with_its_class_status_type_and_title() -> None:
    request = Request({"type": "http", "method": "GET", "headers": [(b"accept", b"*/*")]})
    response = problems.refusal(request, _TeapotError("short and stout", spout=1))
    assert response.status_code == 418
    assert response.media_type == problems.PROBLEM
    assert json.loads(bytes(response.body)) == {
        "type": "https://example.org/problems/teapot",
        "title": "I'm a teapot",
        "status": 418,
        "detail": "short and stout",
        "spout": 1,
    }
