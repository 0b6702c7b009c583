"""``urnkit serve``: the resolver (RFC 8458 §4.4) and its registration API over HTTP."""

from __future__ import annotations

import argparse
import os
import socket

from urnkit.commandline import EXIT_OK, Commands, Help, count
from urnkit.resolver.cli.common import REFUSED, add, database_flag, services_for, settings_for

_SERVE = Help(
    "Run the URN:NBN resolver (RFC 8458 §4.4) and its registration API over HTTP.",
    "Creates the schema in an empty database, refuses an outdated one ('urnkit db\n"
    "upgrade' first), then serves until interrupted. Flags override URNKIT_* variables\n"
    "(URNKIT_DATABASE_URL, URNKIT_HOST, URNKIT_PORT, URNKIT_WORKERS, URNKIT_SERVER, ...),\n"
    "which override the configuration file (urnkit.toml).",
    REFUSED,
)


PROTOCOL = "urnkit.resolver.web.redirect_protocol:ResolutionProtocol"  # uvicorn's


def check_listenable(host: str, port: int) -> None:
    """Raise :class:`OSError` saying so when ``host:port`` cannot be listened on (taken, or no
    such address here), before the ASGI server starts and fails with a traceback or status 3.

    >>> check_listenable("127.0.0.1", 0)
    >>> check_listenable("127.0.0.1", 70000)
    Traceback (most recent call last):
    ...
    OSError: cannot listen on 127.0.0.1:70000: a TCP port is 1 to 65535
    """
    if not 0 <= port < 2**16:  # bind() would raise OverflowError
        raise OSError(f"cannot listen on {host}:{port}: a TCP port is 1 to 65535")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        if os.name != "nt":  # as the servers bind; on Windows it would share a taken port
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            raise OSError(f"cannot listen on {host}:{port}: {error.strerror}") from None


def workers(text: str) -> int:
    """``--workers``: a count, or ``auto`` for one server process per CPU this one may use.

    >>> workers("3"), workers("auto") >= 1
    (3, True)
    """
    if text == "auto":
        from urnkit.resolver.settings import available_cpus

        return available_cpus()
    return count(text)


def _serve(args: argparse.Namespace) -> int:
    settings = settings_for(args)
    check_listenable(settings.host, settings.port)
    services_for(args, upgrade=True)
    os.environ.update(settings.environment())  # every worker process reads the same settings
    print(f"urnkit resolver: open http://{settings.host}:{settings.port}/", flush=True)
    target = "urnkit.resolver.web:app_from_environment"
    if settings.server == "uvicorn":
        import uvicorn

        uvicorn.run(
            target,
            factory=True,
            host=settings.host,
            port=settings.port,
            workers=settings.workers,
            log_level="warning",
            proxy_headers=False,  # the trusted proxies' headers are the application's
            http=PROTOCOL,  # records' redirects answered below the application
        )
    else:
        from granian.constants import Interfaces
        from granian.log import LogLevels
        from granian.server import Server

        Server(
            target,
            address=settings.host,
            port=settings.port,
            interface=Interfaces.ASGI,
            workers=settings.workers,
            factory=True,
            log_level=LogLevels.warning,
        ).serve()
    return EXIT_OK


def add_commands(commands: Commands) -> None:
    """Add ``serve``."""
    serve = add(commands, "serve", _serve, _SERVE)
    database_flag(serve)
    serve.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=count, help="port to listen on (default 8000)")
    serve.add_argument(
        "--workers", type=workers, help="server processes, or 'auto': one per CPU (default 1)"
    )
    serve.add_argument(
        "--server", choices=("uvicorn", "granian"), help="ASGI server (default uvicorn)"
    )
    serve.add_argument(
        "--replica-url",
        action="append",
        metavar="URL",
        help="a PostgreSQL streaming standby that serves reads; repeat for each "
        "(default: none, or URNKIT_REPLICA_URLS, comma-separated)",
    )
    serve.add_argument(
        "--replica-max-lag",
        type=count,
        metavar="SECONDS",
        help="how far behind a standby may be before reads skip it (default 10)",
    )
    serve.add_argument(
        "--trusted-proxies",
        metavar="ADDRESSES",
        help="addresses and networks whose forwarding headers are believed, comma-separated "
        "(default: none)",
    )
    serve.add_argument(
        "--forwarded-headers",
        choices=("x-forwarded", "forwarded"),
        help="the trusted proxies' header form: X-Forwarded-For/-Proto/-Host, or RFC 7239 "
        "Forwarded; the other is ignored (default x-forwarded)",
    )
