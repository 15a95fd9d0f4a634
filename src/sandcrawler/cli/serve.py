"""``sandcrawler serve``: the read-only web pages (``sandcrawler.site``)."""

from __future__ import annotations

import errno
import logging
import os
import socket

import click
import uvicorn

from sandcrawler.cli.options import open_services
from sandcrawler.core.errors import ConfigError
from sandcrawler.site.app import create_app


@click.command()
@click.option("--host", default=None,
              help="Address to listen on [default: setting serve.host, 127.0.0.1]. Anything "
                   "but loopback needs a token (setting serve.token).")
@click.option("--port", type=click.IntRange(0, 65535), default=None,
              help="Port to listen on [default: setting serve.port, 8080].")
def serve(host: str | None, port: int | None) -> None:
    """Serve the read-only web pages: dashboard, documents, search, ingest results,
    captures and Crossref references, each also as JSON (?format=json).

    Reads the configured database and store; writes nothing. With serve.token
    set, every request needs it (Authorization: Bearer TOKEN, or ?token=TOKEN
    once, which sets a cookie). Answers only requests addressed to its own
    address, localhost on loopback, or a name in serve.allowed_hosts (against
    DNS rebinding). Stop with Ctrl-C."""
    services = open_services(**{"serve.host": host, "serve.port": port})
    settings = services.settings.serve
    app = create_app(services)  # refuses an unprotected exposure before any other work
    services.check_schema()
    sock = listen(settings.host, settings.port)
    port = sock.getsockname()[1]  # the one the system chose for --port 0
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    click.echo(f"sandcrawler serve: http://{host}:{port}/ "
               f"({services.settings.database.url.split('://', 1)[0]}; Ctrl-C stops)", err=True)
    config = uvicorn.Config(app, log_level=logging.WARNING, access_log=False,
                            server_header=False)
    uvicorn.Server(config).run(sockets=[sock])


def listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound here rather than by uvicorn: a busy port or a
    foreign address is one line (ConfigError), not uvicorn's log and traceback."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        return socket.create_server((host, port), family=family)
    except OSError as e:
        reason = os.strerror(e.errno) if e.errno else str(e)
        hint = (": another program listens there; choose another with --port"
                if e.errno == errno.EADDRINUSE else "")
        raise ConfigError(f"cannot listen on {host}:{port}: {reason}{hint}") from None
