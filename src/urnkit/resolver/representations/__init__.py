"""Every outward format of the resolver, pure: no I/O, no HTTP, no database.

The functions here take domain objects (records, locations, histories) and give text, bytes or
JSON-ready values: the JSON record, JSON-LD, Dublin Core, epicur, linksets, uri-list, Link
headers and signposts, citations, RFC 2483 request names and Accept negotiation. They import
:mod:`urnkit.resolver.domain` only; services and the web layer both stand on them.
"""
