"""Debian's nginx, really started, unprivileged, in a directory of its own: the site of
``docs/deploy/nginx-urnkit.conf`` with its ports, paths and certificate put to local ones, or any
other ``http`` block. Used by ``benchmarks/proxy_bench.py``, ``benchmarks/site_bench.py`` and the
tests behind nginx.

Example::

    with running_nginx(directory, urnkit_site(directory, [8001, 8002], 8080, 8443)):
        ...  # https://127.0.0.1:8443/URN:NBN:fi-1 goes through the cache to a urnkit server
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Final

SITE: Final = Path(__file__).resolve().parents[1] / "docs" / "deploy" / "nginx-urnkit.conf"
STARTUP_SECONDS: Final = 60  # a map of 1,000,000 entries takes a while to build


class NginxError(Exception):
    """nginx is missing, or did not start."""


def find_nginx() -> str:
    """nginx's path (Debian puts it in /usr/sbin), or an :class:`NginxError` saying how to get
    it."""
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")
    if found is None:
        raise NginxError("nginx is not installed: apt-get install nginx")
    return found


def certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost, and its key, made by openssl."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    command = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2"]
    command += ["-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"]
    command += ["-keyout", str(key), "-out", str(cert)]
    subprocess.run(command, check=True, capture_output=True)
    return cert, key


def urnkit_site(
    directory: Path, upstreams: Sequence[int], http: int, https: int, template: Path = SITE
) -> str:
    """The documented site (or another written like it, ``template``), serving on
    127.0.0.1:``http`` and ``https`` (TLS, a new self-signed certificate) in front of urnkit
    servers on 127.0.0.1:``upstreams``, its cache in ``directory``."""
    cert, key = certificate(directory)
    site = template.read_text(encoding="utf-8")
    servers = "".join(
        f"    server 127.0.0.1:{port} max_fails=3 fail_timeout=10s;\n" for port in upstreams
    )
    site = re.sub(r"(?m)^    server 127\.0\.0\.1:800\d .*\n", "", site)
    site = site.replace("upstream urnkit {\n", "upstream urnkit {\n" + servers)
    site = re.sub(r"(?m)^    listen \[::\].*\n", "", site)
    site = site.replace("listen 80;", f"listen 127.0.0.1:{http};")
    site = site.replace("listen 443 ssl", f"listen 127.0.0.1:{https} ssl")
    site = site.replace("/var/cache/nginx/urnkit", str(directory / "cache"))
    site = site.replace("/etc/ssl/certs/resolver.example.pem", str(cert))
    return site.replace("/etc/ssl/private/resolver.example.key", str(key))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def running_nginx(
    directory: Path, http_block: str, workers: int = 1, access_log: Path | None = None
) -> Iterator[int]:
    """nginx serving ``http_block`` (what goes inside ``http { }``) with ``workers`` worker
    processes, its files in ``directory``; yields its master process id (its process group's
    too) and stops it after. With ``access_log``, nginx logs each request there, one line
    each: its cache status (``$upstream_cache_status``: HIT, STALE, UPDATING, MISS, …)."""
    nginx = find_nginx()
    conf = directory / "nginx.conf"
    temp = {name: directory / name for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi")}
    for path in temp.values():
        path.mkdir(exist_ok=True)
    user = "user root root;\n" if os.geteuid() == 0 else ""  # else workers run as nobody
    logging = "    access_log off;\n"
    if access_log is not None:
        logging = "    log_format cache_status '$upstream_cache_status';\n"
        logging += f"    access_log {access_log} cache_status;\n"
    conf.write_text(
        f"{user}worker_processes {workers};\ndaemon off;\npid {directory / 'nginx.pid'};\n"
        f"error_log {directory / 'error.log'} warn;\nevents {{ worker_connections 4096; }}\n"
        f"http {{\n{logging}"
        f"    client_body_temp_path {temp['body']};\n    proxy_temp_path {temp['proxy']};\n"
        f"    fastcgi_temp_path {temp['fastcgi']};\n    uwsgi_temp_path {temp['uwsgi']};\n"
        f"    scgi_temp_path {temp['scgi']};\n{http_block}\n}}\n",
        encoding="utf-8",
    )
    check = subprocess.run(
        [nginx, "-t", "-c", str(conf), "-p", str(directory)], capture_output=True, text=True
    )
    if check.returncode != 0:
        raise NginxError(f"nginx refused its configuration:\n{check.stderr}")
    # A session of its own: its process group (master and workers) is its CPU time's.
    process = subprocess.Popen(
        [nginx, "-c", str(conf), "-p", str(directory)],
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        ports = [int(port) for port in re.findall(r"listen 127\.0\.0\.1:(\d+)", http_block)]
        _wait_for(ports, process, directory)
        yield process.pid
    finally:
        process.terminate()
        with suppress(subprocess.TimeoutExpired):
            process.wait(timeout=10)
        if process.poll() is None:
            process.kill()
            process.wait()


def _wait_for(ports: Sequence[int], process: subprocess.Popen[bytes], directory: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    for port in ports:
        while True:
            if process.poll() is not None:
                log = (directory / "error.log").read_text(errors="replace")
                raise NginxError(f"nginx exited:\n{log}")
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline:
                raise NginxError(f"nginx did not listen on {port} in {STARTUP_SECONDS} s")
            time.sleep(0.05)
