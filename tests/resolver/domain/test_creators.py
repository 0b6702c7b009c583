"""A record's creators and their kind (person or organisation), read from its metadata."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from urnkit.resolver.domain.creators import Creator, creators_of


def test_an_inverted_name_is_a_person_and_a_plain_name_has_no_kind() -> None:
    found = creators_of({"creators": ["Virtanen, Anna", "Kansalliskirjasto"]})
    assert [(c.kind, c.family, c.given) for c in found] == [
        ("person", "Virtanen", "Anna"),
        (None, None, None),
    ]


def test_an_object_gives_its_kind_parts_and_identifier() -> None:
    orcid = "https://orcid.org/0000-0002-1825-0097"
    found = creators_of(
        {
            "Creators": [
                {"name": "National Library of Finland", "kind": "organisation"},
                {"family": "Lee", "given": "Bo", "id": orcid},
                {"name": "Someone", "kind": "robot"},
            ]
        }
    )
    assert found == (
        Creator("National Library of Finland", "organisation"),
        Creator("Lee, Bo", "person", "Lee", "Bo", orcid),
        Creator("Someone"),
    )


def test_a_single_creator_need_not_be_a_list() -> None:
    assert creators_of({"creator": "Org"}) == (Creator("Org"),)


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
        ),
    )
)
def test_any_metadata_value_gives_named_creators_or_none(value: object) -> None:
    # Metadata is free JSON: whatever a client stored, reading its creators never fails,
    # and every creator found has a non-empty name.
    for creator in creators_of({"creators": value}):
        assert creator.name.strip()
        assert creator.kind in (None, "person", "organisation")
