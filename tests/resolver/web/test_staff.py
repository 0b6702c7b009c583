"""The staff pages over HTTP, on SQLite and PostgreSQL, as a browser (or an attacker's page)
would use them: sign-in, its limits, sessions, CSRF, organisations kept apart, and passwords
kept out of the database and the log."""

from __future__ import annotations

import re
import secrets
import unicodedata
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from hypothesis import example, given, settings
from hypothesis import strategies as st
from resolver_support import (
    DATABASES,
    Resolver,
    Server,
    fresh_database,
    set_up_resolver,
    urnkit,
    urnkit_here,
)
from staff_support import create_user, csrf_of, sign_in, signed_in

from urnkit.resolver.domain import Location, UnacceptableError, check_user_name
from urnkit.resolver.domain.accounts import LONGEST_PASSWORD, LONGEST_USER_NAME, SHORTEST_PASSWORD
from urnkit.resolver.services import Services
from urnkit.resolver.store import Store


def test_a_one_time_password_signs_in_to_the_password_change_first(resolver: Resolver) -> None:
    name, one_time = create_user(resolver, "Test Library", "registrant")
    with httpx.Client(base_url=resolver.base_url) as client:
        assert sign_in(client, name.upper(), one_time).headers["location"] == "/staff/password"
        # Until the password is changed, every other page leads to the change.
        assert client.get("/staff/tokens").headers["location"] == "/staff/password"
        page = client.get("/staff/password")
        short = {"current": one_time, "new": "short", "csrf": csrf_of(page)}
        refused = client.post("/staff/password", data=short)
        assert refused.status_code == 422
        assert 'id="new-error"' in refused.text
        assert 'aria-describedby="new-error"' in refused.text
        new = {"current": one_time, "new": "a long new password", "csrf": csrf_of(page)}
        assert client.post("/staff/password", data=new).headers["location"] == "/staff/"
        assert client.get("/staff/").status_code == 200
    with httpx.Client(base_url=resolver.base_url) as again:
        assert sign_in(again, name, one_time).status_code == 401  # the old one is gone
        assert sign_in(again, name, "a long new password").headers["location"] == "/staff/"


def test_a_wrong_password_is_refused_beside_the_field(resolver: Resolver) -> None:
    name, _ = create_user(resolver, "Test Library", "registrant")
    with httpx.Client(base_url=resolver.base_url) as client:
        refused = sign_in(client, name, "not the password")
        assert refused.status_code == 401
        assert 'aria-describedby="password-error"' in refused.text
        assert "urnkit_staff=" not in refused.headers.get("set-cookie", "")
        assert client.get("/staff/").status_code == 303


def test_the_session_cookie_is_httponly_samesite_and_scoped(resolver: Resolver) -> None:
    name, one_time = create_user(resolver, "Test Library", "registrant")
    with httpx.Client(base_url=resolver.base_url) as client:
        cookie = sign_in(client, name, one_time).headers["set-cookie"].lower()
        assert "httponly" in cookie
        assert "samesite=lax" in cookie
        assert "path=/staff" in cookie
        assert "secure" not in cookie  # over plain http
    # Behind a trusted proxy that says the client came over https: Secure.
    with httpx.Client(base_url=resolver.base_url) as client:
        client.headers["X-Forwarded-Proto"] = "https"
        # (the pre-session cookie: the session cookie is set by the same code, and the test
        # client, on plain http, would not send a Secure cookie back)
        cookie = client.get("/staff/sign-in").headers["set-cookie"].lower()
        assert "urnkit_staff_pre=" in cookie
        assert "; secure" in cookie
        assert "httponly" in cookie


def test_staff_answers_are_never_stored(resolver: Resolver) -> None:
    with signed_in(resolver, "Test Library", "registrant") as (client, _, _):
        for path in ("/staff/", "/staff/tokens", "/staff/sign-in"):
            assert client.get(path).headers["cache-control"] == "no-store"


@pytest.mark.parametrize("token", [None, "", "0" * 64])
def test_a_post_without_the_sessions_csrf_token_is_refused(
    resolver: Resolver, token: str | None
) -> None:
    with signed_in(resolver, "Test Library", "registrant") as (client, _, _):
        fields = {"organisation": "Test Library", "role": "registrant"}
        if token is not None:
            fields["csrf"] = token
        refused = client.post("/staff/tokens", data=fields, headers={"Accept": "text/html"})
        assert refused.status_code == 403
        assert "CSRF" in refused.text
        # Nor does a token of another session pass.
        with signed_in(resolver, "Test Library", "registrant") as (other, _, _):
            fields["csrf"] = csrf_of(other.get("/staff/tokens"))
        assert client.post("/staff/tokens", data=fields).status_code == 403


def test_a_forged_post_cannot_revoke_another_organisations_token(resolver: Resolver) -> None:
    with signed_in(resolver, "Other Library", "registrant") as (client, _, _):
        page = client.get("/staff/tokens")
        created = client.post(
            "/staff/tokens",
            data={"organisation": "Other Library", "role": "registrant", "csrf": csrf_of(page)},
        )
        assert created.status_code == 201
        [other_id] = list(_live_token_ids(resolver, "Other Library"))[:1]
    with signed_in(resolver, "Test Library", "registrant") as (client, _, _):
        page = client.get("/staff/tokens")
        assert "Other Library" not in page.text  # neither listed
        forged = client.post(f"/staff/tokens/{other_id}/revoke", data={"csrf": csrf_of(page)})
        assert forged.status_code == 404
        mint = {"organisation": "Other Library", "role": "registrant", "csrf": csrf_of(page)}
        assert client.post("/staff/tokens", data=mint).status_code == 403
        escalate = {"organisation": "Test Library", "role": "admin", "csrf": csrf_of(page)}
        assert client.post("/staff/tokens", data=escalate).status_code == 403
        assert client.get("/staff/accounts").status_code == 403  # admins only
    assert other_id in _live_token_ids(resolver, "Other Library")


def _live_token_ids(resolver: Resolver, organisation: str) -> list[int]:
    engine = sa.create_engine(resolver.database_url)
    with engine.connect() as connection:
        rows = connection.execute(
            sa.text(
                "SELECT tokens.id FROM tokens JOIN organisations ON organisations.id = "
                "tokens.organisation_id WHERE organisations.name = :name AND revoked IS NULL "
                "ORDER BY tokens.id DESC"
            ),
            {"name": organisation},
        )
        ids = [row[0] for row in rows]
    engine.dispose()
    return ids


def test_a_disabled_accounts_session_stops_at_once(resolver: Resolver) -> None:
    with (
        signed_in(resolver, "Test Library", "admin") as (admin, _, _),
        signed_in(resolver, "Test Library", "registrant") as (registrant, name, password),
    ):
        assert registrant.get("/staff/tokens").status_code == 200
        page = admin.get("/staff/accounts")
        found = re.search(rf"<td>{name}</td>.*?/staff/accounts/(\d+)/disable", page.text, re.S)
        assert found is not None
        account_id = found[1]
        disabled = admin.post(f"/staff/accounts/{account_id}/disable", data={"csrf": csrf_of(page)})
        assert disabled.status_code == 303
        assert registrant.get("/staff/tokens").headers["location"].startswith("/staff/sign-in")
        assert sign_in(registrant, name, password).status_code == 401


def test_an_admin_ends_an_accounts_sessions(resolver: Resolver) -> None:
    with (
        signed_in(resolver, "Test Library", "admin") as (admin, _, _),
        signed_in(resolver, "Test Library", "registrant") as (registrant, name, password),
    ):
        page = admin.get("/staff/accounts")
        found = re.search(rf"<td>{name}</td>.*?/staff/accounts/(\d+)/end-sessions", page.text, re.S)
        assert found is not None
        ended = admin.post(f"/staff/accounts/{found[1]}/end-sessions", data={"csrf": csrf_of(page)})
        assert ended.status_code == 303
        assert registrant.get("/staff/tokens").headers["location"].startswith("/staff/sign-in")
        assert admin.get("/staff/tokens").status_code == 200  # the admin's own goes on
        assert sign_in(registrant, name, password).headers["location"] == "/staff/"  # not disabled


@pytest.mark.parametrize(
    "target",
    ["https://evil.example/", "//evil.example/staff/", "/\\evil.example", "/staff/\r\nX: y", "/"],
)
def test_the_return_path_leads_only_to_a_staff_page(resolver: Resolver, target: str) -> None:
    with signed_in(resolver, "Test Library", "registrant") as (client, name, password):
        client.cookies.clear()
        answer = sign_in(client, name, password, next=target)
        assert answer.headers["location"] == "/staff/"
    with signed_in(resolver, "Test Library", "registrant") as (client, name, password):
        client.cookies.clear()
        answer = sign_in(client, name, password, next="/staff/tokens?lang=fi")
        assert answer.headers["location"] == "/staff/tokens?lang=fi"


def test_an_unauthenticated_get_is_sent_to_sign_in_and_back(resolver: Resolver) -> None:
    with httpx.Client(base_url=resolver.base_url) as client:
        answer = client.get("/staff/tokens?lang=de")
        assert answer.status_code == 303
        sign_in_page = "/staff/sign-in?next=%2Fstaff%2Ftokens%3Flang%3Dde&lang=de"
        assert answer.headers["location"] == sign_in_page


def test_the_language_chosen_by_lang_is_kept_through_every_redirect(resolver: Resolver) -> None:
    """Sign-in, the forced password change, the pages after a form and sign-out stay in the
    language the first page was asked in (?lang=), as their links and forms do."""
    name, one_time = create_user(resolver, "Test Library", "registrant")
    with httpx.Client(base_url=resolver.base_url, follow_redirects=True) as client:
        form = client.get("/staff/tokens?lang=fi")
        assert form.url.params["lang"] == "fi"
        assert 'action="/staff/sign-in?lang=fi"' in form.text
        fields = {"username": name, "password": one_time, "csrf": csrf_of(form)}
        fields["next"] = "/staff/tokens?lang=fi"
        change = client.post("/staff/sign-in?lang=fi", data=fields)
        assert (change.url.path, change.url.params["lang"]) == ("/staff/password", "fi")
        assert '<html lang="fi">' in change.text
        fields = {"current": one_time, "new": secrets.token_urlsafe(16), "csrf": csrf_of(change)}
        home = client.post("/staff/password?lang=fi", data=fields)
        assert (home.url.path, home.url.params["lang"]) == ("/staff/", "fi")
        fields = {"csrf": csrf_of(home), "organisation": "Test Library", "role": "registrant"}
        created = client.post("/staff/tokens?lang=sv", data=fields)
        revoke = re.search(r'action="(/staff/tokens/\d+/revoke)\?lang=sv"', created.text)
        assert revoke is not None, created.text
        revoked = client.post(f"{revoke[1]}?lang=sv", data={"csrf": csrf_of(home)})
        assert (revoked.url.path, revoked.url.params["lang"]) == ("/staff/tokens", "sv")
        out = client.post("/staff/sign-out?lang=de", data={"csrf": csrf_of(home)})
        assert (out.url.path, out.url.params["lang"]) == ("/staff/sign-in", "de")
        assert '<html lang="de">' in out.text


def test_sign_out_ends_the_session_on_the_server(resolver: Resolver) -> None:
    """A session cookie copied before sign-out is refused after it."""
    with signed_in(resolver, "Test Library", "registrant") as (client, _, _):
        page = client.get("/staff/")
        copied = client.cookies["urnkit_staff"]
        assert client.post("/staff/sign-out", data={"csrf": csrf_of(page)}).status_code == 303
        assert "urnkit_staff" not in client.cookies  # dropped from the browser
    with httpx.Client(base_url=resolver.base_url, cookies={"urnkit_staff": copied}) as thief:
        refused = thief.get("/staff/tokens")
        assert refused.status_code == 303
        assert refused.headers["location"].startswith("/staff/sign-in")
        # Its form's CSRF token with it: still to the sign-in page, no token made.
        posted = thief.post("/staff/tokens", data={"csrf": csrf_of(page), "role": "registrant"})
        assert posted.status_code == 303
        assert posted.headers["location"].startswith("/staff/sign-in")


def test_a_password_change_ends_the_accounts_other_sessions(resolver: Resolver) -> None:
    with signed_in(resolver, "Test Library", "registrant") as (client, name, password):
        with httpx.Client(base_url=resolver.base_url) as elsewhere:
            assert sign_in(elsewhere, name, password).headers["location"] == "/staff/"
            assert elsewhere.get("/staff/tokens").status_code == 200
            page = client.get("/staff/password")
            fields = {"current": password, "new": password + "!", "csrf": csrf_of(page)}
            assert client.post("/staff/password", data=fields).status_code == 303
            assert elsewhere.get("/staff/tokens").status_code == 303  # ended
        assert client.get("/staff/tokens").status_code == 200  # this one goes on, anew


@pytest.mark.parametrize("cookie", ["urnkit_staff_pre", "urnkit_staff"])
def test_a_client_chosen_cookie_gives_no_usable_csrf_token(resolver: Resolver, cookie: str) -> None:
    """A value an attacker chose (and could plant in a victim's browser) is replaced by one
    the server signed; a token shown beside it does not pass with it."""
    chosen = "attacker-chosen-value"
    with httpx.Client(base_url=resolver.base_url, cookies={cookie: chosen}) as client:
        page = client.get("/staff/sign-in")
        issued = page.cookies["urnkit_staff_pre"]
        assert issued != chosen
        token = csrf_of(page)
    name, one_time = create_user(resolver, "Test Library", "registrant")
    fields = {"username": name, "password": one_time, "csrf": token}
    with httpx.Client(base_url=resolver.base_url, cookies={cookie: chosen}) as victim:
        assert victim.post("/staff/sign-in", data=fields).status_code == 403
    with httpx.Client(base_url=resolver.base_url, cookies={"urnkit_staff_pre": issued}) as same:
        assert same.post("/staff/sign-in", data=fields).status_code == 303  # the server's


def test_a_token_created_on_the_page_works_on_the_api(resolver: Resolver) -> None:
    label = f"page {secrets.token_hex(4)}"
    with signed_in(resolver, "Test Library", "admin") as (client, name, password):
        page = client.get("/staff/tokens")
        fields = {"organisation": "Test Library", "role": "registrant", "label": label}
        created = client.post("/staff/tokens", data={**fields, "csrf": csrf_of(page)})
        token = created.text.split('class="shown-once"><code>')[1].split("<")[0]
        row = re.search(rf"<tr><td>(\d+)</td><td>Test Library</td>[^\n]*{label}", created.text)
        assert row is not None
    with httpx.Client(
        base_url=resolver.base_url, headers={"Authorization": f"Bearer {token}"}
    ) as api:
        urn = f"urn:nbn:fi:test-{secrets.token_hex(5)}"
        body = {"locations": [{"url": "https://example.org/s"}], "metadata": {}}
        assert api.put(f"/api/v1/urns/{urn}", json=body).status_code == 201
        # No staff page writes a record yet: the account acts through the services, as its
        # pages would, with its principal.
        store = Store(resolver.database_url)
        try:
            services = Services(store)
            account = services.accounts.authenticate(name, password, None)
            changed = [Location("https://example.org/staff")]
            services.records.put(account.principal(), urn, changed, {"title": "By staff"})
        finally:
            store.close()
        history = api.get(f"/api/v1/urns/{urn}/history").json()["entries"]
    assert [entry["actor"] for entry in history] == [
        f"Test Library (token {row[1]})",
        f"Test Library (account {name})",
    ]


@pytest.mark.parametrize("kind", DATABASES)
def test_failed_sign_ins_slow_down_their_address_only_across_two_servers(
    tmp_path: Path, kind: str
) -> None:
    """Wrong passwords from address A, on either of two servers of one database, make A wait
    (429 with Retry-After), even with the right password; the right password from B signs in
    at once. The servers believe the tests' X-Forwarded-For."""
    with fresh_database(kind, tmp_path) as url:
        set_up_resolver(url)
        env = {
            "URNKIT_STAFF_SIGN_IN_ATTEMPTS": "3",
            "URNKIT_STAFF_SIGN_IN_BACKOFF_SECONDS": "600",  # no test waits it out
            "URNKIT_TRUSTED_PROXIES": "127.0.0.1",
        }
        with Server(url, env=env) as one, Server(url, env=env) as two:
            name, one_time = create_user(
                Resolver(one.base_url, url, "", "", ""), "Test Library", "admin"
            )
            answers = []
            for server in (one, two, one, two):
                with httpx.Client(base_url=server.base_url, headers=_FROM_A) as client:
                    answers.append(sign_in(client, name, "wrong password"))
            assert [answer.status_code for answer in answers] == [401, 401, 401, 429]
            assert 590 <= int(answers[-1].headers["retry-after"]) <= 600
            assert 'id="password-error"' not in answers[-1].text
            with httpx.Client(base_url=one.base_url, headers=_FROM_A) as client:
                assert sign_in(client, name, one_time).status_code == 429  # A waits
            with httpx.Client(base_url=two.base_url, headers=_FROM_B) as client:
                signed = sign_in(client, name, one_time)  # B does not
                assert signed.headers["location"] == "/staff/password"


_FROM_A = {"X-Forwarded-For": "192.0.2.10"}
_FROM_B = {"X-Forwarded-For": "192.0.2.20"}


@pytest.mark.parametrize("kind", DATABASES)
def test_passwords_are_in_neither_the_database_nor_the_log(tmp_path: Path, kind: str) -> None:
    with fresh_database(kind, tmp_path) as url:
        set_up_resolver(url)
        with Server(url) as server:
            resolver = Resolver(server.base_url, url, "", "", "")
            with signed_in(resolver, "Test Library", "registrant") as (client, name, password):
                sign_in(client, name, "a wrong one but long")
                one_time = create_user(resolver, "Test Library", "admin")[1]
            log = server.output()
        dump = _text_of_every_table(url)
    assert name in dump
    # Both accounts' hashes, the first made by the server when its password was changed, at
    # the costs the settings give it.
    costs = re.findall(r"\$argon2id\$v=19\$(m=\d+,t=\d+,p=\d+)\$", dump)
    assert len(costs) == 2, costs
    assert set(costs) == {"m=7168,t=5,p=1"}  # resolver_support.LEAST_HASHING
    for secret in (password, one_time, "a wrong one but long"):
        assert secret not in dump
        assert secret not in log
    assert "/staff/sign-in" in log  # the log is there, without the bodies


def _text_of_every_table(url: str) -> str:
    """Every row of every table of the database, as text, read through SQL."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            tables = sa.MetaData()
            tables.reflect(connection)
            assert "accounts" in tables.tables
            return "\n".join(
                repr(tuple(row))
                for table in tables.sorted_tables
                for row in connection.execute(sa.select(table))
            )
    finally:
        engine.dispose()


@settings(max_examples=200)
@given(st.text(max_size=LONGEST_USER_NAME + 5))
def test_a_user_name_is_1_to_254_printable_characters_without_outer_spaces(name: str) -> None:
    acceptable = (
        0 < len(name) <= LONGEST_USER_NAME
        and name.isprintable()
        and name.strip() == name
        and len(check_key(name)) <= LONGEST_USER_NAME
    )
    if acceptable:
        assert check_user_name(name) == name
    else:
        with pytest.raises(UnacceptableError) as refused:
            check_user_name(name)
        assert refused.value.extensions["field"] == "username"


def check_key(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold()


# Passwords at and past every boundary: empty, too short or too long (by one), control
# characters and NUL, Unicode beyond the Basic Multilingual Plane.
passwords = st.one_of(
    st.text(max_size=LONGEST_PASSWORD + 20),
    st.text(min_size=LONGEST_PASSWORD - 1, max_size=LONGEST_PASSWORD + 1),
    st.text(min_size=SHORTEST_PASSWORD - 1, max_size=SHORTEST_PASSWORD + 1),
    st.builds("{}\x00{}".format, st.text(max_size=12), st.text(max_size=12)),
    st.text(st.characters(min_codepoint=0x10000), min_size=11, max_size=14),
    st.sampled_from(["", " " * 12, "tab\there is one", "new\nline and more", "\u2028" * 12]),
)


def _acceptable(password: str) -> bool:
    return SHORTEST_PASSWORD <= len(password) <= LONGEST_PASSWORD and not any(
        unicodedata.category(character) == "Cc" for character in password
    )


@settings(max_examples=30, deadline=None)
@example(password="\x00" * 12, user_name="nul\x00in the name")
@example(password="p" * (LONGEST_PASSWORD + 1), user_name="u" * (LONGEST_USER_NAME + 1))
@given(password=passwords, user_name=st.text(max_size=LONGEST_USER_NAME + 2))
def test_any_sign_in_is_refused_beside_the_password_and_never_a_500(
    resolver: Resolver, password: str, user_name: str
) -> None:
    # Each attempt from an address of its own (the resolver believes X-Forwarded-For), so
    # the failures of one example do not lock out the next.
    client_address = f"198.51.{secrets.randbelow(256)}.{secrets.randbelow(256)}"
    with httpx.Client(
        base_url=resolver.base_url, headers={"X-Forwarded-For": client_address}
    ) as client:
        refused = sign_in(client, user_name or "nobody", password)
    assert refused.status_code in (401, 429), refused.text
    if refused.status_code == 401:
        assert 'aria-describedby="password-error"' in refused.text
        assert 'id="password-error"' in refused.text


@settings(max_examples=12, deadline=None)  # each example a new account: seconds each
@given(new=passwords)
def test_any_new_password_is_taken_or_refused_beside_its_field(
    resolver: Resolver, new: str
) -> None:
    with signed_in(resolver, "Test Library", "registrant") as (client, name, current):
        page = client.get("/staff/password")
        fields = {"current": current, "new": new, "csrf": csrf_of(page)}
        answer = client.post("/staff/password", data=fields)
        if _acceptable(new) and new != current:
            assert answer.status_code == 303, answer.text
            client.cookies.clear()
            assert sign_in(client, name, new).headers["location"] == "/staff/"
        else:
            assert answer.status_code == 422, answer.text
            assert 'aria-describedby="new-error"' in answer.text
            assert 'id="new-error"' in answer.text


def test_the_command_line_creates_an_account_with_a_one_time_password(resolver: Resolver) -> None:
    name = f"user-{secrets.token_hex(4)}"
    command = ("admin", "create-user", "Test Library", name, "--role", "registrant")
    done = urnkit(*command, "--database-url", resolver.database_url)
    one_time = done.stdout.splitlines()[-1]  # the last line, alone
    assert name in done.stdout.splitlines()[0]
    with httpx.Client(base_url=resolver.base_url) as client:
        assert sign_in(client, name, one_time).headers["location"] == "/staff/password"


def test_the_command_line_disables_and_enables_an_account(resolver: Resolver) -> None:
    with signed_in(resolver, "Test Library", "registrant") as (client, name, password):
        database = ("--database-url", resolver.database_url)
        done = urnkit_here("admin", "disable-user", name.upper(), *database)
        assert f"account {name} of Test Library" in done.stdout
        # Its open session ends at once, and it cannot sign in again until enabled.
        assert client.get("/staff/tokens").headers["location"].startswith("/staff/sign-in")
        assert sign_in(client, name, password).status_code == 401
        urnkit_here("admin", "enable-user", name, *database)
        assert sign_in(client, name, password).headers["location"] == "/staff/"
        unknown = urnkit_here("admin", "disable-user", f"{name}-none", *database, check=False)
        assert unknown.returncode != 0
        assert f"no account is called '{name}-none'" in unknown.stderr
