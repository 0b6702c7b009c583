"""The creators of a record, with their kind: a person or an organisation.

A record's ``metadata`` names its creators under ``creators`` (or ``creator``), a list whose
items are either a name or an object::

    "creators": ["Virtanen, Anna", {"name": "National Library of Finland",
                                    "kind": "organisation"},
                 {"family": "Lee", "given": "Bo", "id": "https://orcid.org/0000-0002-1825-0097"}]

An object may give ``kind`` (``person`` or ``organisation``), ``name``, ``family`` and ``given``
(a person's name in parts), and ``id`` (a URI: an ORCID, ISNI or ROR identifier). A bare name
says no kind, unless it has the library catalogues' inverted form "Family, Given", which only
persons take (RDA 9.2.2.4, 11.2.2 for comparison: corporate names are not inverted). Every
format states a kind only where the metadata gives one, so no organisation becomes a person.

>>> [(c.kind, c.name) for c in creators_of({"creators": ["Virtanen, Anna", "Demo University"]})]
[('person', 'Virtanen, Anna'), (None, 'Demo University')]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

CreatorKind = Literal["person", "organisation"]
KINDS: dict[str, CreatorKind] = {"person": "person", "organisation": "organisation"}
"""The kinds a creator may be given, as the metadata spells them."""


@dataclass(frozen=True, slots=True)
class Creator:
    """One creator: its display ``name``, its ``kind`` when known, a person's ``family`` and
    ``given`` names when known, and an identifying URI.

    >>> Creator.from_value({"family": "Lee", "given": "Bo"}).name
    'Lee, Bo'
    """

    name: str
    kind: CreatorKind | None = None
    family: str | None = None
    given: str | None = None
    identifier: str | None = None

    @classmethod
    def from_value(cls, value: object) -> Creator | None:
        """The creator a metadata value names, or None when it names none (an empty string,
        a number, an object without a name).

        >>> Creator.from_value({"name": "Demo University", "kind": "organisation"}).kind
        'organisation'
        >>> Creator.from_value("Lee, Bo")
        Creator(name='Lee, Bo', kind='person', family='Lee', given='Bo', identifier=None)
        """
        if isinstance(value, str):
            return cls._from_name(value.strip())
        if isinstance(value, Mapping):
            return cls._from_object(value)
        return None

    @classmethod
    def _from_name(cls, name: str) -> Creator | None:
        if not name:
            return None
        family, comma, given = name.partition(",")
        if comma and family.strip() and given.strip():
            return cls(name, "person", family.strip(), given.strip())
        return cls(name)

    @classmethod
    def _from_object(cls, value: Mapping[object, object]) -> Creator | None:
        def text(key: str) -> str | None:
            found = value.get(key)
            return found.strip() or None if isinstance(found, str) else None

        family, given = text("family"), text("given")
        name = text("name") or ", ".join(part for part in (family, given) if part) or None
        if name is None:
            return None
        kind = KINDS.get(text("kind") or "", "person" if family or given else None)
        return cls(name, kind, family, given, text("id"))


def creators_of(metadata: Mapping[str, object]) -> tuple[Creator, ...]:
    """The creators ``metadata`` names, in its order, under ``creators`` or ``creator`` (a list
    or a single value); values that name no one are left out.

    >>> creators_of({"creator": {"name": "Org", "kind": "organisation"}})[0].kind
    'organisation'
    >>> creators_of({"title": "x"})
    ()
    """
    for key, value in metadata.items():
        if key.lower() in ("creators", "creator"):
            values = value if isinstance(value, list) else [value]
            found = (Creator.from_value(item) for item in values)
            return tuple(creator for creator in found if creator is not None)
    return ()
