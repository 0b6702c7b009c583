"""The registrants' staff pages over HTTP, on SQLite and PostgreSQL: a record's history with
the differences of each change, the upload previewed then committed, the broken links
rechecked; each kept to the account's organisation."""

from __future__ import annotations

import base64
import html
import re

import httpx
import sqlalchemy as sa
from resolver_support import Resolver, register
from staff_support import csrf_of, signed_in, site

from urnkit.resolver.store import Store
from urnkit.resolver.store.tables import records
from urnkit.resolver.web.routes.staff.upload import LONG, STEPS


def _rows(page: httpx.Response) -> list[str]:
    """The text of each row of the page's tables, tags dropped, entities decoded."""
    rows = re.findall(r"<tr>(.*?)</tr>", page.text, re.S)
    return [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", row)).split()) for row in rows]


def test_history_shows_each_change_with_its_differences(
    resolver: Resolver, api: httpx.Client, unique: str
) -> None:
    urn = f"urn:nbn:fi:test-{unique}"
    register(api, urn, [{"url": "https://example.org/one"}], {"title": "One"})
    patch = {"metadata": {"title": "Two", "year": 2026}}
    assert api.patch(f"/api/v1/urns/{urn}", json=patch).status_code == 200
    with signed_in(resolver, "Test Library", "registrant") as (client, _, _):
        page = client.get(f"/staff/records/{urn}/history")
        assert page.status_code == 200, page.text
        rows = _rows(page)
        assert "metadata title changed One Two" in rows
        assert "metadata year added — 2026" in rows
        assert any(r.startswith("location https://example.org/one added — {") for r in rows)
        assert page.text.count("(token ") == 2
        assert f'href="/staff/records/{urn}"' in page.text


def _recheck(client: httpx.Client, url: str) -> httpx.Response:
    """Post the recheck of ``url``, as the links page's form does."""
    page = client.get("/staff/links")
    return client.post("/staff/links/recheck", data={"url": url, "csrf": csrf_of(page)})


def test_a_broken_link_rechecked_turns_good(
    resolver: Resolver, api: httpx.Client, unique: str
) -> None:
    with site() as answering, signed_in(resolver, "Test Library", "registrant") as (client, _, _):
        url = answering.url + unique
        urn = f"urn:nbn:fi:test-{unique}"
        register(api, urn, [{"url": url}])
        assert url not in client.get("/staff/links").text  # never checked: not broken
        done = _recheck(client, url)
        assert done.status_code == 303
        assert done.headers["location"].startswith("/staff/links?checked=")
        shown = client.get(done.headers["location"])
        row = next(r for r in _rows(shown) if r.startswith(url))
        assert f"{url} {urn} broken (HTTP 404)" in row
        assert "Checked now" in shown.text
        answering.status = 200
        again = client.get(_recheck(client, url).headers["location"])
        assert not any(r.startswith(url) for r in _rows(again))  # no longer broken
        assert re.search(r"<code>[^<]*</code>: working \(HTTP 200\)", again.text)


def test_recheck_now_of_an_address_not_allowed_is_shown_refused(
    resolver: Resolver, api: httpx.Client, anonymous: httpx.Client, unique: str
) -> None:
    # The server allows 127.0.0.1 alone (the tests' sites): 127.0.0.2 is loopback, and refused.
    url = f"http://127.0.0.2:9/{unique}"
    urn = f"urn:nbn:fi:test-{unique}"
    register(api, urn, [{"url": url}])  # registering it stays allowed
    with signed_in(resolver, "Test Library", "registrant") as (client, _, _):
        shown = client.get(_recheck(client, url).headers["location"])
        reason = "refused: address 127.0.0.2 is loopback; allow it with fetch_allowed_networks"
        assert f'<code>{url}</code>: refused, <span lang="en">{reason}</span>' in shown.text
        assert url not in client.get("/staff/links").text  # not among the broken links
    assert anonymous.get(f"/{urn}").headers["location"] == url  # not broken: resolved to


def test_another_organisations_pages_are_refused(
    resolver: Resolver, api: httpx.Client, other: httpx.Client, unique: str
) -> None:
    with site() as answering:
        url = answering.url + unique
        urn = f"urn:nbn:fi:test-{unique}"
        register(api, urn, [{"url": url}])
        with signed_in(resolver, "Test Library", "registrant") as (client, _, _):
            assert _recheck(client, url).status_code == 303  # broken now (404)
            assert url in client.get("/staff/links").text
        with signed_in(resolver, "Other Library", "registrant") as (client, _, _):
            history = client.get(f"/staff/records/{urn}/history")
            assert history.status_code == 404
            missing = client.get(f"/staff/records/urn:nbn:fi:test-{unique}x/history")
            assert missing.status_code == 404
            # Not told apart: the same page, but for the URN it names.
            assert history.text.replace(urn, "") == missing.text.replace(urn + "x", "")
            assert url not in client.get("/staff/links").text
            peeked = client.get("/staff/links", params={"checked": url})
            assert peeked.status_code == 403
            assert "HTTP 404" not in peeked.text
            forged = _recheck(client, url)  # a valid session and CSRF token, not its link
            assert forged.status_code == 403
            assert 'id="url-error"' in forged.text


def _count(store: Store) -> int:
    with store.snapshot() as tx:
        return int(tx.connection.scalar(sa.select(sa.func.count()).select_from(records)) or 0)


def _preview(client: httpx.Client, content: bytes, **fields: str) -> httpx.Response:
    """Post the upload form with ``content`` as a CSV file."""
    form = client.get("/staff/upload")
    files = {"file": ("records.csv", content, "text/csv")}
    return client.post("/staff/upload", data={"csrf": csrf_of(form), **fields}, files=files)


def _commit_fields(page: httpx.Response) -> dict[str, str]:
    """The hidden fields of the preview's commit form."""
    form = page.text.split('action="/staff/upload/commit"')[1].split("</form>")[0]
    return dict(re.findall(r'name="([a-z]+)" value="([^"]*)"', form))


def _commit(client: httpx.Client, fields: dict[str, str]) -> httpx.Response:
    """Post the commit form as the browser sends it (multipart)."""
    parts = {name: (None, value) for name, value in fields.items()}
    return client.post("/staff/upload/commit", files=parts)


def test_an_upload_is_previewed_then_committed_as_previewed(
    resolver: Resolver, server_database: Store, unique: str
) -> None:
    good = f"urn:nbn:fi:test-{unique}"
    content = (
        f'urn,url,metadata\n{good},https://example.org/{unique},"{{""title"": ""One""}}"\n'
        f"urn:nbn:fi:other-{unique},https://example.org/x,\n"
    ).encode()
    with signed_in(resolver, "Test Library", "registrant") as (client, name, _):
        before = _count(server_database)
        page = _preview(client, content)
        assert page.status_code == 200, page.text
        rows = _rows(page)
        assert rows[1].startswith(f"2 {good} created")
        assert rows[2].startswith(f"3 urn:nbn:fi:other-{unique} refused (not written)")
        assert "is not delegated to 'Test Library'" in rows[2]
        assert _count(server_database) == before  # nothing written by the preview
        done = _commit(client, _commit_fields(page))
        assert done.status_code == 303
        assert done.headers["location"] == "/staff/upload?written=1"
        assert _count(server_database) == before + 1
        assert "1 row written." in client.get(done.headers["location"]).text
        # Uploaded again, changed, by the same account: history names it twice, each diff.
        changed = content.replace(b"One", b"Two")
        again = _preview(client, changed, change="yes")
        assert _rows(again)[1].startswith(f"2 {good} replaced (1 difference)")
        assert _commit(client, _commit_fields(again)).status_code == 303
        history = client.get(f"/staff/records/{good}/history")
        assert history.text.count(f"Test Library (account {name})") == 2
        shown = _rows(history)
        assert "metadata title changed One Two" in shown
        assert "metadata title added — One" in shown


def test_a_file_changed_since_its_preview_is_refused(
    resolver: Resolver, server_database: Store, unique: str
) -> None:
    content = f"urn\nurn:nbn:fi:test-{unique}\n".encode()
    with signed_in(resolver, "Test Library", "registrant") as (client, _, _):
        fields = _commit_fields(_preview(client, content))
        before = _count(server_database)
        longer = content + f"urn:nbn:fi:test-{unique}b\n".encode()
        fields["content"] = base64.b64encode(longer).decode("ascii")
        refused = _commit(client, fields)
        assert refused.status_code == 409
        assert 'id="file-error"' in refused.text
        assert "changed since its preview" in refused.text
        assert _count(server_database) == before


def test_a_forged_commit_for_another_organisation_is_refused(
    resolver: Resolver, server_database: Store, unique: str
) -> None:
    content = f"urn\nurn:nbn:fi:test-{unique}\n".encode()
    with signed_in(resolver, "Test Library", "registrant") as (client, _, _):
        fields = _commit_fields(_preview(client, content))
    before = _count(server_database)
    with signed_in(resolver, "Other Library", "registrant") as (client, _, _):
        fields["csrf"] = csrf_of(client.get("/staff/upload"))  # its own valid session and token
        refused = _commit(client, fields)
        assert refused.status_code in (403, 409)
        assert _count(server_database) == before


def test_a_file_too_large_is_refused_beside_the_field(resolver: Resolver) -> None:
    with signed_in(resolver, "Test Library", "registrant") as (client, _, _):
        refused = _preview(client, b"urn\n" + b"x" * (10 * 2**20))
        assert refused.status_code == 422
        assert 'aria-describedby="file-error"' in refused.text
        assert "at most 10,485,760 are taken" in refused.text


def test_a_long_files_preview_shows_its_progress_then_the_preview(
    resolver: Resolver, server_database: Store, unique: str
) -> None:
    lines = [f"urn:nbn:fi:test-{unique}-{n},https://example.org/{n}" for n in range(LONG)]
    lines += [lines[0], f"urn:nbn:fi:other-{unique},https://example.org/x"]
    content = ("urn,url\n" + "\n".join(lines) + "\n").encode()
    with signed_in(resolver, "Test Library", "registrant") as (client, _, _):
        before = _count(server_database)
        form = client.get("/staff/upload")
        files = {"file": ("records.csv", content, "text/csv")}
        parts: list[str] = []
        with client.stream(
            "POST", "/staff/upload", data={"csrf": csrf_of(form)}, files=files
        ) as answer:
            assert answer.status_code == 200
            assert answer.headers["x-accel-buffering"] == "no"
            for part in answer.iter_text():
                parts.append(part)
                if "<progress" in part:
                    # Sent while the preview runs: its progress, not yet its result.
                    assert "<caption>" not in "".join(parts)
        page = "".join(parts)
        assert _count(server_database) == before  # nothing written by the preview
        fields = _commit_fields(httpx.Response(200, text=page))
        done = _commit(client, fields)  # the streamed page's form commits as previewed
        assert done.headers["location"] == f"/staff/upload?written={LONG}"
        assert _count(server_database) == before + LONG
    steps = re.findall(r'<progress id="progress-\d+" max="(\d+)" value="(\d+)">', page)
    total = len(lines)
    assert [int(checked) for _, checked in steps] == [
        0,
        *(n for n in range(1, total + 1) if n * STEPS // total > (n - 1) * STEPS // total),
    ]
    assert {int(most) for most, _ in steps} == {total}
    assert f'<label for="progress-{len(steps)}">{total:,} of {total:,} rows checked' in page
    assert 'class="progress" role="status"' in page
    shown = _rows(httpx.Response(200, text=page))
    assert f"{LONG} of {total} rows would be written" in page
    assert shown[1].startswith(f"2 urn:nbn:fi:test-{unique}-0 created")
    duplicate, undelegated = shown[-2], shown[-1]
    assert duplicate.startswith(f"{LONG + 2} urn:nbn:fi:test-{unique}-0 refused (not written)")
    assert "the URN of line 2 again" in duplicate  # RFC 8141 §3: equivalent to line 2's
    assert undelegated.startswith(f"{LONG + 3} urn:nbn:fi:other-{unique} refused (not written)")
