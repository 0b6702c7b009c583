"""The pages in English, Finnish, Swedish, German and Czech (docs/languages.md).

* The catalogues: the ``.pot`` is what the templates hold now (extracted again and compared);
  every message has a translation in every catalogue, none fuzzy or empty, with the same
  placeholders and the same markup as its English.
* Choosing the language: ``Accept-Language`` (RFC 9110 §12.5.4, lookup as in RFC 4647 §3.4)
  and ``?lang=``, which overrides it; a ``?lang=`` naming no language of the pages is a 400
  problem. Properties of both in process; each page over HTTP on SQLite and PostgreSQL.
* What a page says of its language: ``<html lang>``, ``Content-Language``, ``Vary``, the
  switcher's links (``hreflang`` and ``lang``), links that keep a chosen ``?lang=``; days and
  numbers as the locale writes them (CLDR); problem details (RFC 9457) in English.
"""

from __future__ import annotations

import re
import secrets
from collections import Counter
from datetime import UTC, date, datetime
from html.parser import HTMLParser
from pathlib import Path

import httpx
import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po
from hypothesis import given
from hypothesis import strategies as st
from resolver_support import BROWSER, wait_for

from urnkit.resolver.web.languages import (
    LANGUAGES,
    LOCALE,
    SOURCE,
    UnsupportedLanguageError,
    accepted_languages,
    negotiated_language,
    requested_language,
)

ROOT = Path(__file__).resolve().parents[3]
TRANSLATED = [language for language in LANGUAGES if language != SOURCE]
PAGES = ["/", "/search?q=urn%3Anbn%3Afi%3Atest-x", "/prefixes", "/statistics", "/docs"]


# --- the catalogues ------------------------------------------------------------------------------


def catalogue(path: Path, language: str | None = None) -> Catalog:
    with path.open("rb") as source:
        return read_po(source, locale=language)


def forms(value: object) -> tuple[str, ...]:
    """A message's id or string as its forms: one, or the singular and plurals."""
    if isinstance(value, str):
        return (value,)
    assert isinstance(value, tuple | list), value
    return tuple(str(form) for form in value)


def messages(found: Catalog) -> dict[str, tuple[str, ...]]:
    """Each message's msgid (its singular) and its msgid forms."""
    return {forms(m.id)[0]: forms(m.id) for m in found if m.id}


def test_the_template_catalogue_is_what_the_templates_hold_now() -> None:
    # babel.cfg is the extraction's configuration, as `pybabel extract -F babel.cfg` reads it.
    with (ROOT / "babel.cfg").open() as config:
        method_map, options_map = parse_mapping_cfg(config)  # type: ignore[no-untyped-call]
    extracted: dict[str, tuple[str, ...]] = {}
    for _file, _line, message, _comments, _context in extract_from_dir(
        str(ROOT), method_map, options_map
    ):
        forms = (message,) if isinstance(message, str) else tuple(message)
        extracted[forms[0]] = forms
    assert len(extracted) > 50
    assert messages(catalogue(LOCALE / "messages.pot")) == extracted, (
        "the templates' messages changed: pybabel extract and update (docs/languages.md)"
    )


def test_there_is_a_catalogue_for_each_language_and_a_language_for_each_catalogue() -> None:
    found = {path.parent.parent.name for path in LOCALE.glob("*/LC_MESSAGES/messages.po")}
    assert found == set(TRANSLATED)


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_message_is_translated(language: str) -> None:
    template = messages(catalogue(LOCALE / "messages.pot"))
    translated = catalogue(LOCALE / language / "LC_MESSAGES" / "messages.po", language)
    assert translated.locale is not None
    assert str(translated.locale) == language
    assert messages(translated) == template  # none missing, none left over
    for message in translated:
        if not message.id:
            continue
        strings = forms(message.string)
        assert not message.fuzzy, f"{language}: fuzzy: {message.id!r}"
        if isinstance(message.id, tuple):  # every plural form of the language
            assert len(strings) == translated.num_plurals, f"{language}: {message.id!r}"
        assert all(text.strip() for text in strings), f"{language}: untranslated {message.id!r}"
        english = forms(message.id)
        for text in strings:
            # The placeholders of the English (``%(name)s``) and its markup, tag for tag; a
            # singular form may leave the number out ("over the last day").
            assert placeholders(text) <= placeholders(" ".join(english)), text
            assert markup(text) == markup(english[-1]), text
        assert placeholders(strings[-1]) == placeholders(english[-1]), strings[-1]


def placeholders(text: str) -> set[str]:
    return set(re.findall(r"%\((\w+)\)s", text))


def markup(text: str) -> Counter[str]:
    return Counter(re.findall(r"</?[a-z]+(?: [^>]*)?>", text))


def test_the_checks_of_a_translation_find_what_is_wrong() -> None:
    assert placeholders("Metadata of %(urn)s") != placeholders("Kuvailutiedot")
    assert markup('<a href="%(x)s">a</a> b') != markup('<a href="%(x)s">a b')


# --- choosing the language, in process ---------------------------------------------------------

_tags = st.sampled_from([*LANGUAGES, "fr", "nb", "ru", "zh-Hant", "se", "smn", "en-GB", "*"])
_weights = st.sampled_from(["", ";q=1", ";q=0", ";q=0.5", ";q=0.25", ";q=0.001", ";Q=0.9"])


def _weight(text: str) -> float:
    return float(text.split("=")[1]) if text else 1.0


@given(st.lists(st.tuples(_tags, st.sampled_from(["", "-FI", "-DE", "-x-private"]), _weights)))
def test_accept_language_takes_the_best_weighted_language_the_pages_have(
    members: list[tuple[str, str, str]],
) -> None:
    # RFC 9110 §12.5.4 with weights (§12.4.2); RFC 4647 §3.4 lookup: "de-DE" falls back to "de".
    header = ", ".join(
        f"{tag}{'' if tag == '*' else region}{weight}" for tag, region, weight in members
    )
    chosen = negotiated_language(header)
    assert chosen in LANGUAGES
    ranges = [
        ("*" if tag == "*" else f"{tag}{region}".lower(), _weight(weight))
        for tag, region, weight in members
    ]
    refused = {language for language, weight in ranges if weight == 0}
    offered = [
        (language.split("-")[0], weight)
        for language, weight in ranges
        if weight > 0
        and language.split("-")[0] in LANGUAGES
        and language.split("-")[0] not in refused
    ]
    wildcards = [weight for language, weight in ranges if language == "*" and weight > 0]
    if offered:
        # The chosen language is offered with the highest weight, or "*" weighs as much.
        best = max(weight for _language, weight in offered)
        assert (chosen, best) in offered or max(wildcards, default=0) >= best
    elif not wildcards:
        assert chosen == SOURCE  # RFC 4647 §3.4: the default when nothing matches


@given(st.text(max_size=40))
def test_accept_language_survives_any_text(header: str) -> None:
    assert negotiated_language(header) in LANGUAGES
    for language_range, weight in accepted_languages(header):
        assert 0 <= weight <= 1
        assert language_range == language_range.lower()


def test_accept_language_examples() -> None:
    # RFC 9110 §12.5.4's example: "da, en-gb;q=0.8, en;q=0.7": English (no Danish here).
    assert negotiated_language("da, en-gb;q=0.8, en;q=0.7") == "en"
    assert negotiated_language("sv-FI;q=0.4, fi;q=0.6") == "fi"
    assert negotiated_language("cs;q=0.1, de-AT;q=0.2") == "de"
    assert negotiated_language("fi;q=0, *;q=0.5, en;q=0") == "sv"  # the first not refused
    assert negotiated_language("de;q=2, sv") == "sv"  # q=2 is no qvalue: the member is ignored


@given(
    st.sampled_from(LANGUAGES),
    st.lists(st.from_regex(r"[A-Za-z0-9]{1,8}", fullmatch=True), max_size=3),
    st.booleans(),
)
def test_lang_names_a_language_by_its_primary_subtag_in_any_case(
    language: str, subtags: list[str], upper: bool
) -> None:
    # RFC 5646 §2.1.1: tags are case-insensitive.
    tag = "-".join([language.upper() if upper else language, *subtags])
    assert requested_language(tag) == language


@given(st.text(max_size=20))
def test_lang_refuses_anything_else(value: str) -> None:
    primary = value.partition("-")[0].lower()
    well_formed = re.fullmatch(r"[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*", value)
    if well_formed and primary in LANGUAGES:
        assert requested_language(value) == primary
    else:
        with pytest.raises(UnsupportedLanguageError) as refused:
            requested_language(value)
        assert refused.value.status == 400
        assert refused.value.extensions["parameter"] == "lang"


# --- the pages over HTTP -------------------------------------------------------------------------


class _Page(HTMLParser):
    """A page's ``<html lang>``, its links (attributes) and the text of each element by id."""

    def __init__(self) -> None:
        super().__init__()
        self.lang: str | None = None
        self.links: list[dict[str, str | None]] = []
        self.hidden: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "html":
            self.lang = dict(attrs).get("lang")
        elif tag == "a":
            self.links.append(dict(attrs))
        elif tag == "input" and dict(attrs).get("type") == "hidden":
            self.hidden.append(dict(attrs))


def page(response: httpx.Response) -> _Page:
    assert response.headers["content-type"].startswith("text/html"), response.text
    parsed = _Page()
    parsed.feed(response.text)
    return parsed


def switcher(parsed: _Page) -> dict[str, str | None]:
    """The language switcher's links: hreflang to href, each in its own language."""
    found = {str(link["hreflang"]): link["href"] for link in parsed.links if link.get("hreflang")}
    for link in parsed.links:
        if link.get("hreflang"):
            assert link["lang"] == link["hreflang"]  # WCAG 3.1.2: each named in itself
    return found


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("path", PAGES)
def test_every_page_is_in_the_language_lang_names(
    anonymous: httpx.Client, path: str, language: str
) -> None:
    joiner = "&" if "?" in path else "?"
    answer = anonymous.get(f"{path}{joiner}lang={language}", headers={"Accept-Language": "cs"})
    assert answer.status_code == 200
    parsed = page(answer)
    assert parsed.lang == language
    assert answer.headers["content-language"] == language
    # The URL alone chose the language: one cache entry per URL (RFC 9111 §4.1).
    assert "accept-language" not in answer.headers.get("vary", "").lower()
    links = switcher(parsed)
    assert set(links) == set(LANGUAGES)
    for tag, href in links.items():
        assert href is not None
        assert f"lang={tag}" in href
        assert "q=urn" in href or "q=" not in path  # the search stays the search
    # The page's own links keep the language chosen.
    internal = [
        str(link["href"])
        for link in parsed.links
        if str(link.get("href")).split("?")[0] in ("/", "/prefixes", "/statistics")
    ]
    assert internal
    assert all(href.endswith(f"lang={language}") for href in internal)


@pytest.mark.parametrize(
    ("accept_language", "language"),
    [
        ("fi-FI, fi;q=0.9, en;q=0.5", "fi"),
        ("fr, sv-FI;q=0.8, en;q=0.7", "sv"),
        ("en;q=0.2, de-CH;q=0.6", "de"),
        ("cs", "cs"),
        ("da, en-gb;q=0.8", "en"),
        (None, "en"),
    ],
)
def test_accept_language_chooses_the_language_and_the_page_varies_by_it(
    anonymous: httpx.Client, accept_language: str | None, language: str
) -> None:
    # RFC 9110 §12.5.4 (Accept-Language), §12.5.5 (Vary).
    headers = {} if accept_language is None else {"Accept-Language": accept_language}
    for path in ("/", "/statistics"):
        answer = anonymous.get(path, headers=headers)
        assert page(answer).lang == language
        assert answer.headers["content-language"] == language
        assert answer.headers["vary"] == "Accept-Language"
    overridden = anonymous.get("/?lang=cs", headers=headers)
    assert page(overridden).lang == "cs"


def test_the_search_form_keeps_the_chosen_language(anonymous: httpx.Client) -> None:
    parsed = page(anonymous.get("/search", params={"q": "Kaamos", "lang": "sv"}))
    assert {"type": "hidden", "name": "lang", "value": "sv"} in parsed.hidden
    assert page(anonymous.get("/search", params={"q": "Kaamos"})).hidden == []


@pytest.mark.parametrize("value", ["fr", "xx-FI", "", "fi_FI", "*", "suomi!"])
def test_a_lang_the_pages_do_not_have_is_a_clear_problem(
    anonymous: httpx.Client, value: str
) -> None:
    # RFC 9457: what is wrong (the value) and where (the lang parameter), in English.
    answer = anonymous.get("/statistics", params={"lang": value})
    assert answer.status_code == 400
    assert answer.headers["content-type"] == "application/problem+json"
    problem = answer.json()
    assert problem["title"] == "Unsupported language"
    assert problem["parameter"] == "lang"
    assert problem["languages"] == list(LANGUAGES)
    assert f"lang={value!r}" in problem["detail"]
    # A browser gets the problem as a page in the language its Accept-Language takes.
    shown = anonymous.get(
        "/prefixes", params={"lang": value}, headers={"Accept": BROWSER, "Accept-Language": "de"}
    )
    assert shown.status_code == 400
    parsed = page(shown)
    assert parsed.lang == "de"
    assert "<h1>400 Die Anfrage kann so nicht beantwortet werden</h1>" in shown.text
    assert '<p lang="en">Unsupported language: ' in shown.text
    assert "Problem details are given in English" not in shown.text  # it is in German
    assert "Die Fehlerbeschreibung steht auf Englisch" in shown.text


def test_problem_details_stay_english(anonymous: httpx.Client, unique: str) -> None:
    # RFC 9457 §3.1: title and detail are for people, but the API's are English throughout.
    urn = f"urn:nbn:fi:test-{unique}"
    for accept_language in ("fi", "sv", "de", "cs"):
        headers = {"Accept-Language": accept_language}
        answer = anonymous.get(f"/api/v1/urns/{urn}", headers=headers)
        assert answer.status_code == 404
        assert answer.json()["title"] == "Not found"
        assert "content-language" not in answer.headers
        shown = anonymous.get(f"/{urn}", headers={**headers, "Accept": BROWSER})
        assert shown.status_code == 404
        assert page(shown).lang == accept_language
        assert "<h1>404 Not found</h1>" not in shown.text
        # issue 32: a URN's 404 page is the reader's; the problem's detail on it stays English
        assert '<h1 lang="en">' not in shown.text
        assert '<p lang="en">' in shown.text
    english = anonymous.get(f"/{urn}", headers={"Accept": BROWSER})
    assert page(english).lang == "en"
    assert "Problem details are given in English" not in english.text  # said in the others


def test_the_redirect_does_not_depend_on_the_language(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    body = {"locations": [{"url": "https://example.org/r"}], "metadata": {"title": "R"}}
    assert api.put(f"/api/v1/urns/{urn}", json=body).status_code == 201
    for query in ("", "?lang=fi", "?lang=nope"):
        answer = anonymous.get(f"/{urn}{query}", headers={"Accept-Language": "fi"})
        assert answer.status_code == 302  # RFC 8458 §4.4: the location, in no language
        assert answer.headers["location"] == "https://example.org/r"
        assert (
            answer.headers["vary"] == "Accept, accept-datetime"
        )  # RFC 7089 §4.1: /{urn} is its TimeGate
        assert "content-language" not in answer.headers


def test_the_landing_page_in_finnish(
    api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    urn, older = f"urn:nbn:fi:test-{unique}", f"urn:nbn:fi:test-{unique}-old"
    body = {"locations": [{"url": "https://example.org/l"}], "metadata": {"title": "Ruska"}}
    assert api.put(f"/api/v1/urns/{urn}", json=body).status_code == 201
    assert api.put(f"/api/v1/urns/{older}", json=body).status_code == 201
    deactivated = api.post(f"/api/v1/urns/{older}/deactivate", json={"successors": [urn]})
    assert deactivated.status_code == 200
    answer = anonymous.get(f"/{urn}?s=I2C&lang=fi", headers={"Accept": BROWSER})
    assert answer.status_code == 200
    assert page(answer).lang == "fi"
    assert answer.headers["vary"] == "Accept"  # by Accept only: the URL named the language
    assert "<h2>Kuvailutiedot</h2>" in answer.text
    assert "<h3>Edeltäjät</h3>" in answer.text
    assert f'href="/{older}?s=I2C&amp;lang=fi"' in answer.text  # the language kept
    today = datetime.now(UTC).date()
    # CLDR's medium Finnish date: day.month.year, without leading zeros.
    assert f"rekisteröity {today.day}.{today.month}.{today.year}" in answer.text
    gone = anonymous.get(f"/{older}?lang=fi", headers={"Accept": BROWSER})
    assert gone.status_code == 410
    assert "Tämä URN-tunnus on poistettu käytöstä." in gone.text
    assert ">poistettu käytöstä</td>" in gone.text  # the history's status after


# The day and the number as each locale writes them (CLDR), independently of Babel.
SWEDISH_MONTHS = [
    "jan.",
    "feb.",
    "mars",
    "apr.",
    "maj",
    "juni",
    "juli",
    "aug.",
    "sep.",
    "okt.",
    "nov.",
    "dec.",
]
DAYS = {
    "en": lambda d: f"{d:%b} {d.day}, {d.year}",
    "fi": lambda d: f"{d.day}.{d.month}.{d.year}",
    "sv": lambda d: f"{d.day} {SWEDISH_MONTHS[d.month - 1]} {d.year}",
    "de": lambda d: f"{d:%d.%m.%Y}",
    "cs": lambda d: f"{d.day}. {d.month}. {d.year}",
}
THOUSANDS = {"en": "1,234", "fi": "1\xa0234", "sv": "1\xa0234", "de": "1.234", "cs": "1\xa0234"}


def test_numbers_and_days_are_written_as_each_locale_writes_them(
    admin: httpx.Client, api: httpx.Client, anonymous: httpx.Client
) -> None:
    prefix = f"fi:test:l{secrets.token_hex(4)}"
    assert (
        admin.post(
            "/api/v1/prefixes", json={"prefix": prefix, "organisation": "Test Library"}
        ).status_code
        == 201
    )
    for count in (1000, 234):
        made = api.post(f"/api/v1/prefixes/{prefix}/urns", params={"count": count})
        assert made.status_code == 201
    urn = made.json()["urn"]
    body = {"locations": [{"url": "https://example.org/n"}], "metadata": {"title": "N"}}
    assert api.put(f"/api/v1/urns/{urn}", json=body).status_code == 200
    assert anonymous.get(f"/{urn}").status_code == 302
    wait_for(
        lambda: prefix in anonymous.get("/statistics").text,  # counted, flushed
        "the resolution to be counted",
        seconds=15,
    )
    today = datetime.now(UTC).date()
    for language in LANGUAGES:
        register = anonymous.get("/prefixes", params={"lang": language}).text
        row = re.search(rf"<code>{re.escape(prefix)}</code>.*?</tr>", register)
        assert row is not None
        assert f'<td class="number">{THOUSANDS[language]}</td>' in row.group()
        statistics = anonymous.get("/statistics", params={"lang": language}).text
        shown = DAYS[language](today)
        assert f'<time datetime="{today.isoformat()}">{shown}</time>' in statistics


def test_the_day_formats_of_the_test_are_cldr_s() -> None:
    # The expectations above, checked once against a fixed day whose forms are known.
    day = date(2026, 3, 5)
    assert [DAYS[language](day) for language in LANGUAGES] == [
        "Mar 5, 2026",
        "5.3.2026",
        "5 mars 2026",
        "05.03.2026",
        "5. 3. 2026",
    ]
