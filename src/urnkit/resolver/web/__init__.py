"""The ASGI application: resolution at ``/{urn}``, the registration API under ``/api/v1``.

A thin adapter: it reads HTTP, calls :class:`~urnkit.resolver.services.Services`, and writes HTTP.
Errors are RFC 9457 problem details (``application/problem+json``), or a readable page when the
client asks for HTML. The URN is taken from the raw request path, so percent-encoded octets
reach the URN parser as they were sent (``%2F`` and ``/`` are different URNs, RFC 8141 §3).

Run it with ``urnkit serve``; servers import :func:`app_from_environment` as a factory
(``urnkit.resolver.web:app_from_environment``).

* :mod:`~urnkit.resolver.web.app` assembles the application (:func:`create_app`);
* :mod:`~urnkit.resolver.web.front` answers resolution's commonest request before routing;
* :mod:`~urnkit.resolver.web.routes` holds a router per area;
* :mod:`~urnkit.resolver.web.deps`, :mod:`~urnkit.resolver.web.schemas` and
  :mod:`~urnkit.resolver.web.problems`: what routes take, the API's models, and errors.
"""

from urnkit.resolver.web.app import app_from_environment, create_app

__all__ = ["app_from_environment", "create_app"]
