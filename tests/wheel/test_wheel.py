"""The built wheel, installed as a deployment installs it (docs/deploy.md): built from a copy of
the checkout, installed with the ``server`` extra into a new virtual environment outside it, and
run from a working directory where the checkout's ``src`` cannot be imported. The wheel must
hold every file under ``src/urnkit``; the installed ``urnkit`` sets up a database, serves, and
answers the pages and protocols a deployment offers, on SQLite and PostgreSQL.

Building and installing need pip to reach setuptools and the server extra's packages; where it
cannot, these tests skip, but fail in CI and under ``URNKIT_REQUIRE_WHEEL=1`` (``.ci/run``).
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import sys
import venv
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from babel.messages.pofile import read_po

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "resolver"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "resolver" / "web"))
from resolver_support import DATABASES, Server, fresh_database
from staff_support import csrf_of

from urnkit.resolver.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "urnkit"
LANGUAGES = ("en", "fi", "sv", "de", "cs")  # the pages' languages (docs/languages.md)
PIP_SECONDS = 600


@pytest.fixture(autouse=True, scope="module")
def _no_settings() -> Iterator[None]:
    """The installed package with no setting in its environment, as an operator first runs
    it: the settings the resolver's tests give every server they start (``URNKIT_*``,
    tests/resolver/conftest.py: the least cost of hashing a password, among others) are put
    aside while these tests run in the same process."""
    names = {f"URNKIT_{field.name.upper()}" for field in fields(Settings)}
    aside = {name: os.environ.pop(name) for name in names & os.environ.keys()}
    yield
    os.environ.update(aside)


def _environment() -> dict[str, str]:
    """This environment without what would make the checkout importable or a proxy used."""
    hidden = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}
    return {**{k: v for k, v in os.environ.items() if k not in hidden}, "NO_PROXY": "*"}


def _pip(*arguments: str | Path, python: str | Path = sys.executable) -> None:
    """Run pip; skip (or fail where the wheel is required) when it cannot do its work."""
    done = subprocess.run(
        [str(python), "-m", "pip", "--disable-pip-version-check", *map(str, arguments)],
        capture_output=True,
        text=True,
        timeout=PIP_SECONDS,
        env=_environment(),
        check=False,
    )
    if done.returncode != 0:
        reason = f"pip {arguments[0]} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
        if os.environ.get("URNKIT_REQUIRE_WHEEL") == "1" or os.environ.get("CI"):
            pytest.fail(reason + "\n(required in CI and under URNKIT_REQUIRE_WHEEL=1)")
        pytest.skip(reason)


def _files_under(directory: Path) -> set[str]:
    """The files under ``directory`` as ``urnkit/…`` names, Python's bytecode caches left out."""
    return {
        path.relative_to(directory.parent).as_posix()
        for path in directory.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built by pip from a copy of the checkout as a fresh clone holds it (what
    ``.gitignore`` names left out): no earlier build in ``build/`` or ``*.egg-info`` can
    slip a stale file in."""
    source = tmp_path_factory.mktemp("source") / "urnkit"
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    patterns = [".git", *(line.rstrip("/") for line in ignored if not line.startswith("#"))]
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*patterns))
    dist = tmp_path_factory.mktemp("dist")
    _pip("wheel", "--quiet", "--no-deps", "--wheel-dir", dist, source)
    (built,) = dist.glob("urnkit-*.whl")
    return built


@dataclass(frozen=True)
class Installed:
    """A virtual environment holding the wheel with its ``server`` extra, and a directory to
    work in, both outside the checkout."""

    bin: Path
    work: Path

    def urnkit(self, *arguments: str) -> str:
        """Run the installed ``urnkit`` in the working directory; its output, checked."""
        done = subprocess.run(
            [str(self.bin / "urnkit"), *arguments],
            capture_output=True,
            text=True,
            cwd=self.work,
            env=_environment(),
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, f"urnkit {' '.join(arguments)}:\n{done.stderr}"
        return done.stdout


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """``pip install '<wheel>[server]'`` into a new virtual environment."""
    environment = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=True).create(environment)
    bin_ = environment / ("Scripts" if os.name == "nt" else "bin")
    _pip("install", "--quiet", f"{wheel}[server]", python=bin_ / "python")
    return Installed(bin_, tmp_path_factory.mktemp("work"))


def test_the_wheel_holds_every_file_under_src(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        shipped = {name for name in archive.namelist() if name.startswith("urnkit/")}
    expected = _files_under(PACKAGE)
    assert expected - shipped == set(), "missing from the wheel (pyproject's package-data)"
    assert shipped - expected == set(), "in the wheel but not under src/urnkit"
    # The staff pages' templates, which an older package-data left out.
    assert "urnkit/resolver/templates/staff/sign_in.html" in shipped


def test_urnkit_is_imported_from_the_installed_environment(installed: Installed) -> None:
    done = subprocess.run(
        [str(installed.bin / "python"), "-c", "import urnkit; print(urnkit.__file__)"],
        capture_output=True,
        text=True,
        cwd=installed.work,
        env=_environment(),
        check=True,
    )
    imported = Path(done.stdout.strip())
    assert imported.is_relative_to(installed.bin.parent), imported
    assert not imported.is_relative_to(ROOT), imported


@dataclass(frozen=True)
class Deployment:
    """The installed server, set up as docs/resolver.md and docs/staff.md set one up: an
    organisation holding ``fi:wheel``, its registrant token, a staff account and its one-time
    password."""

    base_url: str
    database_url: str
    token: str
    user: str
    password: str

    def client(self, token: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=30, trust_env=False)


@pytest.fixture(scope="module", params=DATABASES)
def deployment(
    request: pytest.FixtureRequest,
    installed: Installed,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Deployment]:
    directory = tmp_path_factory.mktemp(f"wheel-{request.param}")
    with fresh_database(request.param, directory) as url:
        database = ("--database-url", url)
        installed.urnkit("db", "upgrade", *database)
        installed.urnkit("admin", "create-org", "Wheel Library", *database)
        installed.urnkit("admin", "delegate", "Wheel Library", "fi:wheel", *database)
        token = installed.urnkit("admin", "create-token", "Wheel Library", *database)
        user = installed.urnkit("admin", "create-user", "Wheel Library", "alice", *database)
        command = (str(installed.bin / "urnkit"),)
        environment = _environment()
        with Server(url, env=environment, urnkit=command, cwd=installed.work) as server:
            yield Deployment(
                server.base_url, url, token.splitlines()[-1], "alice", user.splitlines()[-1]
            )


URN = "URN:NBN:fi:wheel-1"
LOCATION = "https://example.org/wheel-1"


@pytest.fixture(scope="module")
def registered(deployment: Deployment) -> Deployment:
    """The deployment with ``URN`` written through the API."""
    with deployment.client(deployment.token) as api:
        body = {"locations": [{"url": LOCATION}], "metadata": {"title": "Wheel"}}
        response = api.put(f"/api/v1/urns/{URN}", json=body)
    assert response.status_code == 201, response.text
    return deployment


def test_an_api_write_is_resolved(registered: Deployment) -> None:
    with registered.client() as client:
        response = client.get(f"/{URN}")
    assert response.status_code == 302
    assert response.headers["location"] == LOCATION


def test_staff_sign_in_and_signed_in_pages(registered: Deployment) -> None:
    with registered.client() as client:
        fields = {"username": registered.user, "password": registered.password}
        form = client.get("/staff/sign-in")
        assert form.status_code == 200, form.text
        signed_in = client.post("/staff/sign-in", data={**fields, "csrf": csrf_of(form)})
        assert signed_in.headers["location"] == "/staff/password"  # the first sign-in's
        page = client.get("/staff/password")
        assert page.status_code == 200, page.text
        new = {"current": registered.password, "new": secrets.token_urlsafe(16)}
        changed = client.post("/staff/password", data={**new, "csrf": csrf_of(page)})
        assert changed.status_code == 303, changed.text
        home = client.get("/staff/")
        records = client.get("/staff/records")
    assert home.status_code == 200, home.text
    assert "You act for Wheel Library." in home.text
    assert records.status_code == 200, records.text
    assert URN in records.text
    # The new password hashed at the default cost (docs/staff.md, "Password hashing").
    engine = sa.create_engine(registered.database_url)
    try:
        with engine.connect() as connection:
            stored = connection.execute(sa.text("SELECT password_hash FROM accounts")).scalar()
    finally:
        engine.dispose()
    assert str(stored).startswith("$argon2id$v=19$m=65536,t=3,p=4$"), stored


def test_oai_pmh_identify(deployment: Deployment) -> None:
    with deployment.client() as client:
        response = client.get("/oai", params={"verb": "Identify"})
    assert response.status_code == 200, response.text
    assert "<Identify>" in response.text
    assert "<repositoryName>" in response.text


def test_the_api_documentation_and_its_files(deployment: Deployment) -> None:
    with deployment.client() as client:
        page = client.get("/docs")
        assert page.status_code == 200, page.text
        files = re.findall(r'(?:href|src)="(/static/[^"]+)"', page.text)
        assert len(files) >= 3, page.text
        for path in files:
            assert client.get(path).status_code == 200, path


@pytest.mark.parametrize("name", ["site.css", "docs.js"])
def test_static_files_are_the_checkouts(deployment: Deployment, name: str) -> None:
    with deployment.client() as client:
        response = client.get(f"/static/{name}")
    assert response.status_code == 200
    assert response.content == (PACKAGE / "resolver" / "static" / name).read_bytes()


def _translation(language: str, message: str) -> str:
    """``message`` as the checkout's catalogue of ``language`` translates it."""
    if language == "en":
        return message
    catalogue = PACKAGE / "resolver" / "locale" / language / "LC_MESSAGES" / "messages.po"
    with catalogue.open("rb") as source:
        translated = read_po(source, locale=language).get(message)
    assert translated is not None
    assert isinstance(translated.string, str)
    return translated.string


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_landing_page_in_each_language(registered: Deployment, language: str) -> None:
    with registered.client() as client:
        headers = {"Accept": "text/html", "Accept-Language": language}
        page = client.get(f"/{URN}", params={"s": "I2C"}, headers=headers)
    assert page.status_code == 200, page.text
    assert f'<html lang="{language}">' in page.text
    assert page.headers["content-language"] == language
    assert f">{_translation(language, 'Locations')}<" in page.text
