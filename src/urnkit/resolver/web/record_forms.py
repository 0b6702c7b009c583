"""The staff pages' record forms, read into what the record services take: a location from its
fields, metadata from its fields and the rest as a JSON object, and back into fields to edit.
Only the form's shape is checked here (a number where a number goes, JSON where JSON goes); the
services check the rest, as they do for the API. A refusal names the form field it concerns
(``field``), so that the page shows it beside that field.

>>> location_of({"url": "https://example.org/", "priority": "2", "label": ""})
Location(url='https://example.org/', priority=2, label=None, media_type=None, organisation=None, restricted_to=None)
>>> metadata_of({"title": " A thesis ", "creators": "Ann\\r\\nBo\\n", "other": '{"pages": 12}'})
{'pages': 12, 'title': 'A thesis', 'creators': ['Ann', 'Bo']}
>>> metadata_fields({"title": "A thesis", "creators": ["Ann"], "pages": 12})["other"]
'{\\n  "pages": 12\\n}'
"""  # noqa: E501

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from urnkit.resolver.domain import Location, ResolverError, UnacceptableError

# The metadata the forms have a field for: a text each, or a list of texts one a line.
TEXTS = ("title", "date", "type", "language", "local_id")
LISTS = ("creators", "identifiers")
OTHER = "other"  # the field holding the rest of the metadata, a JSON object
LOCATION_TEXTS = ("label", "media_type", "restricted_to")


def location_of(form: Mapping[str, str]) -> Location:
    """The location of a form's ``url``, ``priority`` (default 1), ``label``, ``media_type``
    and ``restricted_to`` fields (an empty one: none)."""
    written = form.get("priority", "").strip() or "1"
    if not written.isascii() or not written.isdigit() or len(written) > 9:
        raise UnacceptableError(
            "the priority is a whole number from 0 (tried first) up", field="priority"
        )
    texts = {name: form.get(name, "").strip() or None for name in LOCATION_TEXTS}
    return Location(form.get("url", "").strip(), int(written), **texts)


def metadata_of(form: Mapping[str, str]) -> dict[str, Any]:
    """The metadata of a form: ``other``'s JSON object, with the fields of :data:`TEXTS` and
    :data:`LISTS` that are filled in. A title is needed."""
    metadata = _other(form.get(OTHER, ""))
    for name in (*TEXTS, *LISTS):
        text = form.get(name, "").strip()
        if not text:
            continue
        if name in metadata:
            raise UnacceptableError(
                f"{name} is given in its own field and in the other metadata: give it once",
                field=OTHER,
            )
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        metadata[name] = text if name in TEXTS else lines
    if not isinstance(metadata.get("title"), str):
        raise UnacceptableError("a record needs a title", field="title")
    return metadata


def _other(text: str) -> dict[str, Any]:
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as error:  # JSONDecodeError is a ValueError
        raise UnacceptableError(
            f"the other metadata is no JSON object: {str(error)[:200]}", field=OTHER
        ) from None
    if not isinstance(value, dict):
        raise UnacceptableError("the other metadata is a JSON object: {…}", field=OTHER)
    return value


def metadata_fields(metadata: Mapping[str, Any]) -> dict[str, str]:
    """The form's fields showing ``metadata``: a value its field cannot show as it is (a
    title that is no text, say) stays in ``other``."""
    fields: dict[str, str] = {}
    rest = dict(metadata)
    for name in TEXTS:
        if isinstance(rest.get(name), str) and "\n" not in rest[name]:
            fields[name] = rest.pop(name)
    for name in LISTS:
        items = rest.get(name)
        if isinstance(items, list) and all(_one_line(item) for item in items):
            fields[name] = "\n".join(rest.pop(name))
    fields[OTHER] = json.dumps(rest, ensure_ascii=False, indent=2) if rest else ""
    return fields


def _one_line(item: object) -> bool:
    return isinstance(item, str) and item.strip() == item and bool(item) and "\n" not in item


def beside(error: ResolverError, field: str) -> ResolverError:
    """``error``, shown beside ``field`` unless it names its own; a refusal of the metadata
    (its ``errors`` pointing into it) beside the metadata field it concerns, else ``other``.

    >>> beside(UnacceptableError("no", errors=[{"location": ["metadata", "title"]}]), "urn"
    ...        ).extensions["field"]
    'title'
    """
    if "field" in error.extensions:
        return error
    places = [e.get("location") or [] for e in error.extensions.get("errors", ())]
    if places and places[0][:1] == ["metadata"]:
        member = places[0][1] if len(places[0]) > 1 else OTHER
        field = member if member in (*TEXTS, *LISTS) else OTHER
    error.extensions["field"] = field
    return error
