"""The admins' staff pages over HTTP, on SQLite and PostgreSQL: organisations, networks,
delegated prefixes, forwarding, harvest sources (harvested now from a real OAI-PMH server, the
last run's refusals shown) and the overview; each refusal beside its field; registrants
refused (403) on every admin page, forged posts with a valid session and CSRF token too."""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from datetime import datetime

import httpx
import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oai_support import PATTERN, Upstream
from resolver_support import Resolver, mark_links, register
from staff_support import csrf_of, signed_in

from urnkit.resolver.store import Store

ADMIN_PAGES = (
    "/staff/admin/",
    "/staff/admin/broken-links",
    "/staff/admin/organisations",
    "/staff/admin/networks",
    "/staff/admin/prefixes",
    "/staff/admin/forwarding",
    "/staff/admin/harvest",
)
ADMIN_POSTS: tuple[tuple[str, dict[str, str]], ...] = (
    ("/staff/admin/organisations", {"name": "Forged Library"}),
    ("/staff/admin/networks", {"organisation": "Test Library", "network": "x", "ranges": "::/0"}),
    ("/staff/admin/networks/remove", {"organisation": "Test Library", "network": "x"}),
    ("/staff/admin/prefixes", {"organisation": "Test Library", "prefix": "fi:forged"}),
    ("/staff/admin/forwarding", {"country": "se", "url_template": "https://e.example/{urn}"}),
    ("/staff/admin/forwarding/remove", {"country": "fi"}),
    ("/staff/admin/harvest", {"name": "forged", "organisation": "Test Library"}),
    ("/staff/admin/harvest/1", {"organisation": "Test Library"}),
    ("/staff/admin/harvest/1/run", {}),
)


def _scalar(resolver: Resolver, query: str, **parameters: object) -> object:
    engine = sa.create_engine(resolver.database_url)
    try:
        with engine.connect() as connection:
            return connection.execute(sa.text(query), parameters).scalar()
    finally:
        engine.dispose()


def _post(client: httpx.Client, page: str, path: str, fields: dict[str, str]) -> httpx.Response:
    """Post ``fields`` to ``path`` with the CSRF token of the form on ``page``."""
    return client.post(path, data={**fields, "csrf": csrf_of(client.get(page))})


def test_a_registrant_is_refused_every_admin_page_and_post(resolver: Resolver) -> None:
    with signed_in(resolver, "Test Library", "registrant") as (client, _, _):
        for path in ADMIN_PAGES:
            assert client.get(path).status_code == 403, path
        token = csrf_of(client.get("/staff/tokens"))  # a valid session and CSRF token
        before = _scalar(resolver, "SELECT count(*) FROM organisations")
        for path, fields in ADMIN_POSTS:
            forged = client.post(path, data={**fields, "csrf": token})
            assert forged.status_code == 403, path
        assert _scalar(resolver, "SELECT count(*) FROM organisations") == before
        assert _scalar(resolver, "SELECT count(*) FROM forwarding WHERE country = 'fi'") == 1
        home = client.get("/staff/").text
        assert "/staff/admin/" not in home  # nor does the navigation offer them


def test_an_admin_creates_an_organisation_and_delegates_it_a_prefix(resolver: Resolver) -> None:
    name = f"Library {secrets.token_hex(4)}"
    prefix = f"fi:a{secrets.token_hex(4)}"
    with signed_in(resolver, "Test Library", "admin") as (client, _, _):
        page = "/staff/admin/organisations"
        created = _post(client, page, page, {"name": f"  {name} "})
        assert (created.status_code, created.headers["location"]) == (303, page)
        again = _post(client, page, page, {"name": name})
        assert again.status_code == 409
        assert 'aria-describedby="name-error"' in again.text
        assert f'<th scope="row">{name}</th>' in client.get(page).text
        fields = {"organisation": name, "prefix": prefix.upper(), "generator": "random"}
        page = "/staff/admin/prefixes"
        assert _post(client, page, page, fields).status_code == 303
        # RFC 8458 §4.3: a prefix is delegated once, in any case
        taken = _post(client, page, page, {**fields, "organisation": "Test Library"})
        assert taken.status_code == 409
        assert 'id="prefix-error"' in taken.text
        # RFC 8458 §4.2: a two-letter country code, then sub-namespaces of letters and digits
        invalid = _post(client, page, page, {**fields, "prefix": "fi-x"})
        assert invalid.status_code == 422
        assert 'aria-describedby="prefix-error"' in invalid.text
        listing = client.get("/staff/admin/organisations").text
        assert f"<code>{prefix}</code>" in listing
    generator = _scalar(
        resolver, "SELECT generator FROM prefixes WHERE prefix = :prefix", prefix=prefix
    )
    assert generator == "random"


def test_an_admin_sets_and_removes_a_network(resolver: Resolver) -> None:
    name = f"rooms-{secrets.token_hex(3)}"
    page = "/staff/admin/networks"
    with signed_in(resolver, "Test Library", "admin") as (client, _, _):
        fields = {"organisation": "Other Library", "network": name, "ranges": "192.0.2.0/24"}
        assert _post(client, page, page, fields).status_code == 303
        assert "192.0.2.0/24" in client.get(page).text
        assert name in client.get("/staff/admin/organisations").text
        wrong = _post(client, page, page, {**fields, "ranges": "192.0.2.1/24"})
        assert wrong.status_code == 422
        assert 'aria-describedby="ranges-error"' in wrong.text
        fields = {"organisation": "Other Library", "network": name}
        assert _post(client, page, page + "/remove", fields).status_code == 303
        gone = _post(client, page, page + "/remove", fields)
        assert gone.status_code == 404
        assert 'role="alert"' in gone.text


def test_an_admin_adds_changes_and_removes_a_forwarding_row(resolver: Resolver) -> None:
    page = "/staff/admin/forwarding"
    with signed_in(resolver, "Test Library", "admin") as (client, _, _):
        fields = {"country": "IS", "url_template": "https://is.example/{urn}", "note": "first"}
        assert _post(client, page, page, fields).status_code == 303
        changing = client.get(page + "?country=is").text
        assert 'value="https://is.example/{urn}"' in changing
        fields = {**fields, "url_template": "https://other.example/r?u={urn}", "note": ""}
        assert _post(client, page, page, fields).status_code == 303
        template = "SELECT url_template FROM forwarding WHERE country = 'is'"
        assert _scalar(resolver, template) == "https://other.example/r?u={urn}"
        # RFC 8458 §4.4: a URN:NBN of Iceland is now sent there
        assert client.get("/urn:nbn:is-123").headers["location"].startswith("https://other.")
        bad = _post(client, page, page, {**fields, "url_template": "https://x.example/"})
        assert bad.status_code == 422
        assert 'aria-describedby="url_template-error"' in bad.text
        assert _post(client, page, page + "/remove", {"country": "is"}).status_code == 303
        assert _scalar(resolver, "SELECT count(*) FROM forwarding WHERE country = 'is'") == 0


def test_a_source_added_on_the_page_is_harvested_now_and_shows_its_refusals(
    resolver: Resolver, upstream: Upstream, unique: str
) -> None:
    upstream.add(
        "oai:repo:1",
        datetime(2024, 1, 1),
        identifier=[f"urn:nbn:fi:test-{unique}", "https://repo.example.org/items/1"],
        title=["Harvested"],
    )
    upstream.add(
        "oai:repo:2",
        datetime(2024, 1, 2),
        identifier=[f"urn:nbn:fi:other-{unique}", "https://repo.example.org/items/2"],
    )
    page = "/staff/admin/harvest"
    fields = {
        "name": f"repo {unique}",
        "organisation": "Test Library",
        "base_url": upstream.base_url,
        "metadata_prefix": "oai_dc",
        "set_spec": "",
        "url_pattern": PATTERN,
    }
    with signed_in(resolver, "Test Library", "admin") as (client, _, _):
        bad = _post(client, page, page, {**fields, "url_pattern": "(", "set_spec": "a b"})
        assert bad.status_code == 422
        assert 'aria-describedby="url_pattern-error"' in bad.text
        added = _post(client, page, page, fields)
        assert added.status_code == 303
        source = added.headers["location"]
        assert "Not harvested yet" in client.get(source).text
        ran = _post(client, source, source + "/run", {})
        assert (ran.status_code, ran.headers["location"]) == (303, source)
        shown = client.get(source).text
        assert "1 created" in shown
        # the URN of Other Library's prefix was refused (RFC 8458 §4.3), and the page says so
        refusals = re.findall(r"<li>(.*?)</li>", shown.split('class="refusals"')[1])
        assert len(refusals) == 1
        assert f"urn:nbn:fi:other-{unique}" in refusals[0]
        assert "1" in client.get(page).text
        changed = _post(client, source, source, {**fields, "metadata_prefix": "epicur"})
        assert changed.status_code == 303
        assert "reads the whole list" in client.get(source).text  # another feed: full
        down = _post(client, source, source, {**fields, "base_url": "ftp://x"})
        assert down.status_code == 422
        assert 'aria-describedby="base_url-error"' in down.text
    counted = "SELECT count(*) FROM records WHERE urn = :urn"
    assert _scalar(resolver, counted, urn=f"urn:nbn:fi:test-{unique}") == 1
    assert _scalar(resolver, counted, urn=f"urn:nbn:fi:other-{unique}") == 0


def test_the_overview_counts_what_the_database_holds(
    resolver: Resolver, api: httpx.Client, unique: str, server_database: Store
) -> None:
    for n in range(3):
        register(api, f"urn:nbn:fi:test-{unique}{n}", [{"url": f"https://e.example/{unique}{n}"}])
    mark_links(server_database, "broken", f"https://e.example/{unique}0")
    with signed_in(resolver, "Test Library", "admin") as (client, _, _):
        page = client.get("/staff/admin/").text
    for status in ("active", "reserved", "deactivated"):
        count = _scalar(resolver, "SELECT count(*) FROM records WHERE status = :s", s=status)
        shown = re.search(rf'id="status-{status}">([^<]*)<', page)
        assert shown is not None
        assert int(shown[1].replace(",", "")) == count
    # A URN counts for the longest delegated prefix covering its own (RFC 8458 §4.3): fi:test
    # itself and its sub-namespaces (fi:test:…, not fi:testx), less those delegated further.
    under = _scalar(
        resolver,
        "SELECT count(*) FROM records r WHERE (r.prefix = 'fi:test' OR r.prefix LIKE 'fi:test:%')"
        " AND NOT EXISTS (SELECT 1 FROM prefixes p WHERE p.prefix LIKE 'fi:test:%'"
        " AND (r.prefix = p.prefix OR r.prefix LIKE p.prefix || ':%'))",
    )
    shown = re.search(r"<code>fi:test</code></th><td>Test Library</td><td[^>]*>([^<]*)<", page)
    assert shown is not None
    assert int(shown[1].replace(",", "")) == under
    broken = _scalar(
        resolver,
        "SELECT count(*) FROM locations JOIN links ON links.url = locations.url "
        "WHERE links.status = 'broken'",
    )
    found = re.search(r'id="broken-links">([\d,]+) location', page)
    assert found is not None
    assert int(found[1].replace(",", "")) == broken
    # issue 17 item 3: records by status over time, charted, its numbers in a table; the
    # newest day's row says what the database holds now
    assert "<svg" in page
    assert 'aria-labelledby="statuses-chart-title statuses-chart-desc"' in page
    table = page[page.index('<h2 id="statuses">') :]
    today = re.search(r"</time></th>((?:<td[^>]*>[^<]*</td>){3})</tr>", table)
    assert today is not None
    cells = [int(c.replace(",", "")) for c in re.findall(r">([\d,]+)</td>", today[1])]
    statuses = ("reserved", "active", "deactivated")
    expected = [
        _scalar(resolver, "SELECT count(*) FROM records WHERE status = :s", s=s) for s in statuses
    ]
    assert cells == expected


@pytest.mark.parametrize("path", ADMIN_PAGES)
def test_every_admin_page_is_in_five_languages(resolver: Resolver, path: str) -> None:
    with signed_in(resolver, "Test Library", "admin") as (client, _, _):
        for language in ("en", "fi", "sv", "de", "cs"):
            page = client.get(f"{path}?lang={language}")
            assert page.status_code == 200
            assert f'<html lang="{language}"' in page.text


@pytest.fixture
def admin_client(resolver: Resolver) -> Iterator[tuple[httpx.Client, str]]:
    """A signed-in admin of "Test Library" and the CSRF token of its session."""
    with signed_in(resolver, "Test Library", "admin") as (client, _, _):
        yield client, csrf_of(client.get("/staff/admin/"))


# Any text a form can carry (UTF-8: no lone surrogates), and the texts at the fields' bounds:
# U+0000 (which PostgreSQL cannot store), control characters, lengths just past the limits,
# names of what exists (an organisation, a prefix delegated, a country of the table).
_TEXT = st.one_of(
    st.text(st.characters(codec="utf-8"), max_size=260),
    st.sampled_from(["", " ", "\x00", "a\x00", "\t", "é" * 200, "x" * 201, "(", "Test Library"]),
    st.sampled_from(["fi:test", "FI:TEST:", "fi", "fi:x" + "1" * 200, "https://a\x00b/", "de"]),
    st.from_regex(r"[a-z]{2}(:[a-z0-9]{1,8}){0,2}", fullmatch=True),
)
_FIELDS = st.dictionaries(
    st.sampled_from(
        [
            "name",
            "organisation",
            "prefix",
            "generator",
            "country",
            "url_template",
            "note",
            "network",
            "ranges",
            "base_url",
            "url_pattern",
            "set_spec",
            "metadata_prefix",
        ]
    ),
    _TEXT,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    path=st.sampled_from(
        [
            "/staff/admin/organisations",
            "/staff/admin/networks",
            "/staff/admin/prefixes",
            "/staff/admin/forwarding",
            "/staff/admin/harvest",
        ]
    ),
    fields=_FIELDS,
)
def test_any_form_input_is_taken_or_refused_beside_a_field_never_a_500(
    admin_client: tuple[httpx.Client, str], path: str, fields: dict[str, str]
) -> None:
    client, token = admin_client
    answer = client.post(path, data={**fields, "csrf": token})
    assert answer.status_code in (303, 404, 409, 422), answer.text
    if answer.status_code != 303:
        error = re.search(r'id="([a-z_]+)-error"|role="alert"', answer.text)
        assert error is not None, answer.text
        if error[1]:
            assert f'aria-describedby="{error[1]}-error"' in answer.text
