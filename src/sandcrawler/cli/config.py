"""``sandcrawler config``: the effective configuration."""

from __future__ import annotations

import click
import orjson

from sandcrawler.config import describe_settings, load_settings


@click.group()
def config() -> None:
    """Inspect the configuration."""


@config.command("show")
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of a table.")
def show(as_json: bool) -> None:
    """Print the effective settings, where each came from, secrets masked.

    Each setting NAME can be given as env var SANDCRAWLER_NAME or as `name` in the
    TOML file (tables are prefixes: [grobid] url = ... is grobid_url).
    """
    settings = load_settings()
    rows = describe_settings(settings)
    if as_json:
        click.echo(orjson.dumps({r["name"]: r["value"] for r in rows}, default=str).decode())
        return
    click.echo(f"# configuration file: {settings.config_file or '(none)'}")
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        value = "" if r["value"] is None else str(r["value"])
        click.echo(f"{r['name']:<{width}}  {value:<40}  [{r['source']}]")
