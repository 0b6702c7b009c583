"""The configuration file (``urnkit.toml``): flags over ``URNKIT_*`` variables over the file over
the defaults, for every command; every key documented; bad files refused in one line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import fields
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from resolver_support import Server

from urnkit.resolver.settings import Settings, available_cpus, read_config

DOCS = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def urnkit(
    *arguments: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``urnkit`` run in ``cwd``, without URNKIT_* variables but those of ``env``."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("URNKIT_")} | (env or {})
    return subprocess.run(
        [sys.executable, "-m", "urnkit", *arguments],
        cwd=cwd,
        env=clean,
        capture_output=True,
        text=True,
    )


def test_every_setting_is_a_documented_key_of_the_file() -> None:
    documented = set(re.findall(r"^\| `(\w+)` \|", DOCS.read_text(encoding="utf-8"), re.M))
    assert documented == {field.name for field in fields(Settings)}


def test_the_file_sets_every_key(tmp_path: Path) -> None:
    defaults = Settings()
    lines = []
    for field in fields(Settings):
        value = getattr(defaults, field.name)
        if isinstance(value, bool):
            lines.append(f"{field.name} = {'false' if value else 'true'}")
        elif isinstance(value, int):
            lines.append(f"{field.name} = {value + 1}")
        elif field.name == "server":
            lines.append('server = "granian"')
        elif field.name == "dns_nameserver":
            lines.append('dns_nameserver = "127.0.0.1:5353"')
        elif field.name in ("trusted_proxies", "fetch_allowed_networks"):
            lines.append(f'{field.name} = "10.0.0.0/8, ::1"')
        elif field.name == "forwarded_headers":
            lines.append('forwarded_headers = "forwarded"')
        elif field.name == "database_url":  # standbys follow a PostgreSQL primary
            lines.append('database_url = "postgresql+psycopg://urnkit@primary/urnkit"')
        elif field.name == "web_archives":
            lines.append('web_archives = "https://archive.example/{datetime}/{url}"')
        elif field.name == "replica_urls":
            lines.append('replica_urls = ["postgresql+psycopg://urnkit@standby/urnkit"]')
        else:
            lines.append(f'{field.name} = "{value}x"')
    path = tmp_path / "urnkit.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    loaded = Settings.from_environment({}, str(path))
    for field in fields(Settings):
        assert getattr(loaded, field.name) != getattr(defaults, field.name), field.name


def test_a_variable_beats_the_file_and_a_flag_beats_both(tmp_path: Path) -> None:
    (tmp_path / "urnkit.toml").write_text('database_url = "sqlite:///from-file.db"\n')
    # The file in the current directory, read by a command.
    assert urnkit("db", "upgrade", cwd=tmp_path).returncode == 0
    assert (tmp_path / "from-file.db").exists()
    env = {"URNKIT_DATABASE_URL": "sqlite:///from-variable.db"}
    assert urnkit("db", "upgrade", cwd=tmp_path, env=env).returncode == 0
    assert (tmp_path / "from-variable.db").exists()
    flag = ("--database-url", "sqlite:///from-flag.db")
    assert urnkit("db", "upgrade", *flag, cwd=tmp_path, env=env).returncode == 0
    assert (tmp_path / "from-flag.db").exists()


def test_config_names_a_file_elsewhere(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "resolver.toml").write_text('database_url = "sqlite:///named.db"\n')
    done = urnkit("db", "upgrade", "--config", "etc/resolver.toml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "named.db").exists()
    env = {"URNKIT_CONFIG": str(tmp_path / "etc" / "resolver.toml")}
    assert urnkit("db", "check", cwd=tmp_path, env=env).returncode == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("prot = 8000\n", "no setting is called 'prot'"),
        ('port = "8000"\n', "port must be a whole number, not '8000'"),
        ("port = -1\n", "port must be a whole number, not -1"),
        ("access_log = 1\n", "access_log must be true or false, not 1"),
        ("host = 127\n", "host must be text, not 127"),
        ('server = "gunicorn"\n', "server must be one of uvicorn, granian, not 'gunicorn'"),
        ('trusted_proxies = "proxy.local"\n', "'proxy.local' is not an IP address or network"),
        (
            'forwarded_headers = "both"\n',
            "forwarded_headers must be one of x-forwarded, forwarded, not 'both'",
        ),
        (
            'fetch_allowed_networks = "intranet"\n',
            "fetch_allowed_networks: 'intranet' is not an IP address or network",
        ),
        ("harvest_max_bytes = 0\n", "harvest_max_bytes and harvest_timeout must be 1 or more"),
        (  # docs/staff.md, "Password hashing"
            "password_memory_kib = 8192\n",
            "password_memory_kib times password_passes must be 35840 or more, not 24576",
        ),
        ("port = \n", "not TOML: Invalid value (at line 1, column 8)"),
    ],
)
def test_a_bad_file_is_one_line_naming_the_file_and_key(
    tmp_path: Path, text: str, message: str
) -> None:
    (tmp_path / "urnkit.toml").write_text(text)
    done = urnkit("db", "upgrade", cwd=tmp_path)
    assert done.returncode == 2
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_a_missing_named_file_is_refused(tmp_path: Path) -> None:
    done = urnkit("db", "upgrade", "--config", "nowhere.toml", cwd=tmp_path)
    assert done.returncode == 2
    assert "cannot read the configuration file nowhere.toml" in done.stderr


def _toml(value: object) -> str:
    """``value`` as a TOML value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    return repr(value)


VALUES = st.one_of(
    st.integers(), st.text(), st.booleans(), st.floats(allow_nan=False, allow_infinity=False)
)


@given(st.one_of(VALUES, st.lists(st.integers(), max_size=3)))
def test_any_value_of_port_is_taken_or_refused_with_a_value_error(value: object) -> None:
    # An input boundary: a TOML value of any type, for a whole-number setting.
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as file:
        file.write(f"port = {_toml(value)}\n")
    try:
        port = read_config(file.name)["port"]
    except ValueError:
        return
    finally:
        os.unlink(file.name)
    assert type(port) is int
    assert port == value


def test_workers_auto_is_one_per_cpu(tmp_path: Path) -> None:
    assert Settings.from_environment({"URNKIT_WORKERS": "auto"}).workers == available_cpus()
    (tmp_path / "urnkit.toml").write_text('workers = "auto"\n')
    assert Settings.from_environment({}, str(tmp_path / "urnkit.toml")).workers == available_cpus()


def test_the_servers_workers_take_their_settings_from_the_file(tmp_path: Path) -> None:
    # Two worker processes: each must read the file's settings, not only the parent.
    config = tmp_path / "urnkit.toml"
    config.write_text("workers = 2\ncache_not_found = 9\ncache_redirect = 9\ncache_invalid = 9\n")
    with Server(f"sqlite:///{tmp_path}/served.db", "--config", str(config)) as server:
        answers = [httpx.get(f"{server.base_url}/urn:nbn:fi:x-{n}") for n in range(20)]
    assert {answer.headers["cache-control"] for answer in answers} == {"max-age=9"}
