"""``sandcrawler grobid``: talk to the configured GROBID server."""

from __future__ import annotations

import click

from sandcrawler.config import load_settings
from sandcrawler.errors import GrobidUnavailable
from sandcrawler.grobid_client import GrobidClient


@click.group()
def grobid() -> None:
    """Check the configured GROBID server."""


@grobid.command("status")
@click.option("--url", help="GROBID base URL [default: setting grobid_url].")
def status(url: str | None) -> None:
    """Whether GROBID is alive, and its version. Exit 3 when it is not reachable."""
    settings = load_settings(grobid_url=url)
    with GrobidClient.from_settings(settings) as client:
        if not client.isalive():
            raise GrobidUnavailable(f"GROBID at {client.base_url} is not alive")
        click.echo(f"{client.base_url}: alive, version {client.version()}")
