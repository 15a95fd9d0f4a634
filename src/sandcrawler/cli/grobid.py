"""``sandcrawler grobid``: talk to the configured GROBID server."""

from __future__ import annotations

import click

from sandcrawler.cli.options import open_services
from sandcrawler.core.errors import GrobidUnavailable


@click.group()
def grobid() -> None:
    """Check the configured GROBID server."""


@grobid.command("status")
@click.option("--url", help="GROBID base URL [default: setting grobid.url].")
def status(url: str | None) -> None:
    """Whether GROBID is alive, and its version. Exit 3 when it is not reachable."""
    client = open_services(grobid_url=url).require_grobid()
    if not client.isalive():
        raise GrobidUnavailable(f"GROBID at {client.base_url} is not alive")
    click.echo(f"{client.base_url}: alive, version {client.version()}")
