"""Citations of records, each read back by an independent parser: BibTeX by bibtexparser (with
its LaTeX decoding), RIS by rispy, CSL-JSON against the CSL project's schema (jsonschema), the
formatted reference by citeproc-py's styles; for records with persons, organisations, several
creators, no date, and titles in Cyrillic, CJK and Finnish."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import rispy
from bibtexparser.entrypoint import parse_string
from bibtexparser.middlewares import LatexDecodingMiddleware, SeparateCoAuthors, SplitNameParts
from hypothesis import given, settings
from hypothesis import strategies as st

from urnkit.resolver.domain import Location, Record
from urnkit.resolver.representations import citations
from urnkit.resolver.representations.citations import (
    CitationError,
    bibliography,
    bibtex,
    csl_json,
    locale_of,
    ris,
)

SCHEMA = jsonschema.Draft7Validator(
    json.loads((Path(__file__).parent.parent / "data" / "csl" / "csl-data.json").read_text("utf-8"))
)
URL = "https://resolver.example/urn:nbn:fi:test-1"
T = datetime(2026, 1, 1, tzinfo=UTC)
TITLES = {
    "cyrillic": "Война и мир: черновики",
    "cjk": "東京の図書館 資料集",
    "finnish": "Äänikirjojen säilyttäminen öisin",
}
CREATORS: dict[str, list[Any]] = {
    "person": [{"family": "Virtanen", "given": "Anna"}],
    "organisation": [{"name": "Kansalliskirjasto", "kind": "organisation"}],
    "several": [
        "Lee, Bo",
        {"name": "National Library of Finland", "kind": "organisation"},
        {"family": "van Rossum", "given": "Guido"},
    ],
    "unknown kind": ["Demo University"],
}


def record(metadata: dict[str, Any], status: str = "active") -> Record:
    location = Location("https://repository.example/old/1")
    return Record(
        "urn:nbn:fi:test-1", "urn:nbn:fi:test-1", "fi:test", status, "Org", T, T,  # type: ignore[arg-type]
        (location,), metadata,
    )  # fmt: skip


def bibtex_entry(text: str) -> dict[str, Any]:
    library = parse_string(text, append_middleware=[LatexDecodingMiddleware(), SeparateCoAuthors()])
    assert not library.failed_blocks, text
    (entry,) = library.entries
    fields: dict[str, Any] = {field.key: field.value for field in entry.fields}
    return {"ENTRYTYPE": entry.entry_type, "ID": entry.key} | fields


def ris_entry(text: str) -> dict[str, Any]:
    assert text.endswith("\r\n")
    assert "\n" not in text.replace("\r\n", "")
    (entry,) = rispy.loads(text)
    return dict(entry)


@pytest.mark.parametrize("script", TITLES)
@pytest.mark.parametrize("kind", CREATORS)
def test_each_format_reads_back_title_creators_and_date(script: str, kind: str) -> None:
    cited = record({"title": TITLES[script], "creators": CREATORS[kind], "date": "2020-03-01"})
    entry = bibtex_entry(bibtex(cited, URL))
    assert (entry["title"], entry["year"], entry["url"]) == (TITLES[script], "2020", URL)
    found = ris_entry(ris(cited, URL))
    assert (found["title"], found["year"], found["urls"]) == (TITLES[script], "2020", [URL])
    (item,) = csl = csl_json(cited, URL)
    SCHEMA.validate(csl)
    assert (item["title"], item["issued"], item["URL"]) == (
        TITLES[script],
        {"date-parts": [[2020, 3, 1]]},
        URL,
    )
    assert TITLES[script] in bibliography(cited, URL)


def test_persons_and_organisations_keep_their_kind_in_every_format() -> None:
    cited = record({"title": "T", "creators": CREATORS["several"]})
    # BibTeX: an organisation's name is braced, so that BibTeX's name parts keep it whole.
    library = parse_string(
        bibtex(cited, URL), append_middleware=[SeparateCoAuthors(), SplitNameParts()]
    )
    names = library.entries[0]["author"]
    assert [(name.von, name.last, name.first) for name in names] == [
        ([], ["Lee"], ["Bo"]),
        ([], ["{National Library of Finland}"], []),
        (["van"], ["Rossum"], ["Guido"]),  # BibTeX's own reading of a particle
    ]
    # RIS: persons "Family, Given"; an organisation with EndNote's trailing comma.
    assert ris_entry(ris(cited, URL))["authors"] == [
        "Lee, Bo",
        "National Library of Finland,",
        "van Rossum, Guido",
    ]
    (item,) = csl_json(cited, URL)
    assert item["author"] == [
        {"family": "Lee", "given": "Bo"},
        {"literal": "National Library of Finland"},
        {"family": "van Rossum", "given": "Guido"},
    ]
    # APA: persons by initials, the organisation whole.
    assert bibliography(cited, URL).startswith("Lee, B., National Library of Finland, & van Rossum")


def test_a_record_without_date_or_creators_is_still_cited() -> None:
    cited = record({"title": "Undated"})
    entry = bibtex_entry(bibtex(cited, URL))
    assert "year" not in entry
    assert "author" not in entry
    found = ris_entry(ris(cited, URL))
    assert "year" not in found
    assert "authors" not in found
    SCHEMA.validate(csl_json(cited, URL))
    assert bibliography(cited, URL).startswith("Undated. (n.d.). ")
    assert bibliography(cited, URL).endswith(URL)


def test_a_date_that_is_no_calendar_date_is_kept_as_written() -> None:
    cited = record({"title": "T", "date": "spring 1999"})
    (item,) = csl = csl_json(cited, URL)
    SCHEMA.validate(csl)
    assert item["issued"] == {"literal": "spring 1999"}
    assert ris_entry(ris(cited, URL))["date"] == "spring 1999"


@pytest.mark.parametrize("status", ["active", "deactivated"])
def test_the_url_is_the_resolvers_never_a_location(status: str) -> None:
    cited = record({"title": "T"}, status)
    texts = [bibtex(cited, URL), ris(cited, URL), json.dumps(csl_json(cited, URL))]
    texts.append(bibliography(cited, URL))
    for text in texts:
        assert URL in text
        assert "repository.example" not in text


def test_types_follow_dc_type() -> None:
    cited = record({"title": "T", "type": "info:eu-repo/semantics/doctoralThesis"})
    assert bibtex_entry(bibtex(cited, URL))["ENTRYTYPE"] == "phdthesis"
    assert ris_entry(ris(cited, URL))["type_of_reference"] == "THES"
    assert csl_json(cited, URL)[0]["type"] == "thesis"


@pytest.mark.parametrize(
    ("locale", "word"), [("en", "n.d."), ("fi", "ei pvm."), ("de", "o.\xa0J."), ("cs", "b.r.")]
)
def test_the_pages_languages_are_citation_locales(locale: str, word: str) -> None:
    assert word in bibliography(record({"title": "T"}), URL, "apa", locale)


def test_a_style_or_locale_not_known_is_refused() -> None:
    for style, locale in [("no-such-style", "en"), ("../apa", "en"), ("apa", "xx")]:
        with pytest.raises(CitationError):
            bibliography(record({"title": "T"}), URL, style, locale)
    assert locale_of("SV-se") == "sv-SE"


# Any text a title may hold, but what no field of a line-based format keeps: line breaks and
# other control characters, which every format reads as a space (whitespace is collapsed).
titles = st.text(
    st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=40
).filter(lambda text: text.strip() != "")


@given(titles)
@settings(deadline=None)  # a shared machine's load is no finding
def test_any_title_round_trips_through_bibtexparser(title: str) -> None:
    entry = bibtex_entry(bibtex(record({"title": title}), URL))
    # pylatexenc reads LaTeX's \textasciicircum as U+02C6, the modifier letter circumflex.
    assert entry["title"].replace("\u02c6", "^") == " ".join(title.split()).replace("\u02c6", "^")


@given(titles)
@settings(deadline=None)  # a shared machine's load is no finding
def test_any_title_round_trips_through_rispy(title: str) -> None:
    assert ris_entry(ris(record({"title": title}), URL))["title"] == " ".join(title.split())


@given(titles)
@settings(deadline=None)  # a shared machine's load is no finding
def test_any_csl_json_passes_the_schema(title: str) -> None:
    SCHEMA.validate(csl_json(record({"title": title, "creators": [title]}), URL))


def test_references_formatted_at_once_in_several_threads_are_each_their_own() -> None:
    # The web layer formats in a thread pool; citeproc-py keeps state in a style's elements.
    records = [record({"title": f"Threaded {n}", "creators": [f"F{n}, G"]}) for n in range(12)]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda each: bibliography(each, URL), records))
    citations._formatted.cache_clear()  # formatted anew, one at a time
    assert together == [bibliography(each, URL) for each in records]
