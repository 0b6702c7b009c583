"""A real OAI-PMH repository to harvest from: pyoai's ``oaipmh.server`` served by wsgiref on
127.0.0.1, in ``oai_dc`` and ``epicur``; and the ``urnkit oai`` commands the harvest tests run,
in this process (``urnkit_here``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any
from urllib.parse import parse_qsl
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from lxml import etree
from oaipmh import common, error
from oaipmh.metadata import MetadataRegistry
from oaipmh.server import Server, oai_dc_writer
from resolver_support import Resolver, urnkit_here

PATTERN = r"https://repo\.example\.org/items/\d+"
OLD = datetime(2020, 1, 1)  # the upstream's datestamps are naive UTC, as pyoai wants them


# --- a real OAI-PMH repository -------------------------------------------------------------------


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def epicur_writer(element: Any, metadata: common.Metadata) -> None:
    """pyoai's writer of ``epicur``: the item's ``epicur`` field is the XML, written as it is."""
    element.append(etree.fromstring(metadata.getField("epicur")[0]))


class Upstream:
    """pyoai's OAI-PMH server over ``items`` (identifier -> datestamp, DC fields or None for a
    deleted record; an ``epicur`` field is the item's epicur XML), on a free port; ``requests``
    records each request's arguments."""

    def __init__(self, batch_size: int = 10) -> None:
        self.items: dict[str, tuple[datetime, dict[str, list[str]] | None]] = {}
        self.requests: list[dict[str, str]] = []
        # "http", "busy", "xml" or "token": fail that way; "huge": answer without end (``sent``
        # counts the bytes), "declared": say 1 GB and send nothing, "trickle": answer requests
        # with a resumption token a byte every half second.
        self.break_with: str | None = None
        self.sent = 0
        registry = MetadataRegistry()
        registry.registerWriter("oai_dc", oai_dc_writer)
        registry.registerWriter("epicur", epicur_writer)
        self.server = Server(self, registry, resumption_batch_size=batch_size)
        self.httpd: WSGIServer = make_server("127.0.0.1", 0, self.app, handler_class=_Quiet)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_port}/oai"

    def add(self, key: str, stamp: datetime, /, **fields: list[str]) -> None:
        self.items[key] = (stamp, fields)

    def delete(self, identifier: str, stamp: datetime) -> None:
        self.items[identifier] = (stamp, None)

    # the IOAI interface pyoai's server calls
    def identify(self) -> common.Identify:
        return common.Identify(
            "Upstream",
            self.base_url,
            "2.0",
            ["a@example.org"],
            OLD,
            "persistent",
            "YYYY-MM-DDThh:mm:ssZ",
            [],
        )

    def listMetadataFormats(self, identifier: str | None = None) -> list[tuple[str, str, str]]:  # noqa: N802
        return [
            ("oai_dc", "http://www.openarchives.org/OAI/2.0/oai_dc.xsd", "oai_dc"),
            ("epicur", "http://www.persistent-identifier.de/xepicur/version1.0/xepicur.xsd", ""),
        ]

    def listSets(self) -> list[Any]:  # noqa: N802
        raise error.NoSetHierarchyError("no sets")

    def listRecords(  # noqa: N802
        self,
        metadataPrefix: str,  # noqa: N803
        set: str | None = None,
        from_: datetime | None = None,
        until: datetime | None = None,
    ) -> list[tuple[Any, Any, None]]:
        found = []
        for identifier, (stamp, fields) in sorted(self.items.items()):
            sets = (fields or {}).get("setSpec", [])  # not a DC element: not written as one
            if set is not None and set not in sets:
                continue
            if (from_ is None or stamp >= from_) and (until is None or stamp <= until):
                header = common.Header(None, identifier, stamp, sets, fields is None)
                found.append((header, common.Metadata(None, fields or {}), None))
        return found

    def app(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        if environ["REQUEST_METHOD"] == "POST":
            body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        else:
            body = environ.get("QUERY_STRING", "").encode()
        arguments = dict(parse_qsl(body.decode()))
        self.requests.append(arguments)
        if self.break_with in ("http", "busy"):
            # OAI-PMH 2.0 §3.1.2.2: "busy" asks to come back in a second, once.
            retry = [("Retry-After", "1")] if self.break_with == "busy" else []
            self.break_with = None if self.break_with == "busy" else self.break_with
            start_response("503 Service Unavailable", [("Content-Type", "text/plain"), *retry])
            return [b"down for maintenance"]
        if self.break_with == "token" and "resumptionToken" in arguments:
            arguments["resumptionToken"] = "expired"
        if self.break_with in ("huge", "declared"):
            length = [("Content-Length", str(10**9))] if self.break_with == "declared" else []
            start_response("200 OK", [("Content-Type", "text/xml"), *length])
            return self._endless() if self.break_with == "huge" else [b""]
        document: bytes = self.server.handleRequest(arguments)
        if self.break_with == "xml":
            document = document[: len(document) // 2]
        start_response("200 OK", [("Content-Type", "text/xml; charset=utf-8")])
        if self.break_with == "trickle" and "resumptionToken" in arguments:
            return self._trickled(document)
        return [document]

    def _endless(self) -> Iterator[bytes]:
        chunk = b"<x>" + b"y" * 65_536
        while True:
            self.sent += len(chunk)
            yield chunk

    @staticmethod
    def _trickled(document: bytes) -> Iterator[bytes]:
        for byte in document:
            time.sleep(0.5)
            yield bytes([byte])

    def __enter__(self) -> Upstream:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def add_source(resolver: Resolver, name: str, upstream: Upstream, *extra: str) -> None:
    urnkit_here(
        "oai",
        "add-source",
        name,
        "--organisation",
        "Test Library",
        "--base-url",
        upstream.base_url,
        "--url-pattern",
        PATTERN,
        *extra,
        "--database-url",
        resolver.database_url,
    )


def harvest(resolver: Resolver, *arguments: str, check: bool = True) -> Any:
    return urnkit_here(
        "oai", "harvest", *arguments, "--database-url", resolver.database_url, check=check
    )


def next_from(resolver: Resolver, name: str) -> str:
    """The ``from=`` the source's next incremental harvest asks ("" before a success)."""
    sources = urnkit_here("oai", "sources", "--database-url", resolver.database_url)
    lines = sources.stdout.splitlines()
    return next(line.split("\t")[5] for line in lines if line.split("\t")[0] == name)
