"""``sandcrawler serve``: the read-only web pages (``sandcrawler.site``)."""

from __future__ import annotations

import logging

import click
import uvicorn

from sandcrawler.cli.options import open_services
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
    click.echo(f"sandcrawler serve: http://{settings.host}:{settings.port}/ "
               f"({services.settings.database.url.split('://', 1)[0]}; Ctrl-C stops)", err=True)
    uvicorn.run(app, host=settings.host, port=settings.port, log_level=logging.WARNING,
                access_log=False, server_header=False)
