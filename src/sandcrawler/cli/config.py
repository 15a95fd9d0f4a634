"""``sandcrawler config``: the effective configuration."""

from __future__ import annotations

from typing import Any

import click
import orjson

from sandcrawler.app.settings import load_settings
from sandcrawler.config import describe_settings


@click.group()
def config() -> None:
    """Inspect the configuration."""


@config.command("show")
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of a table.")
def show(as_json: bool) -> None:
    """Print the effective settings by section, where each came from, secrets masked.

    A setting `url` of section [grobid] is `url` in the TOML file's [grobid]
    table, or the environment variable SANDCRAWLER_GROBID_URL (dict and list
    settings as JSON). Sources: option, env, file, default.

    \b
      sandcrawler config show
      sandcrawler --config prod.toml config show --json | jq .grobid
    """
    settings = load_settings()
    rows = describe_settings(settings)
    if as_json:
        nested: dict[str, Any] = {}
        for r in rows:
            table = nested.setdefault(r["section"], {}) if r["section"] else nested
            table[r["name"].rpartition(".")[2]] = r["value"]
        click.echo(orjson.dumps(nested, default=str).decode())
        return
    click.echo(f"# configuration file: {settings.config_file or '(none)'}")
    width = max(len(r["name"]) for r in rows)
    section = None
    for r in rows:
        if r["section"] != section:
            section = r["section"]
            click.echo(f"\n[{section}]" if section else "")
        value = "" if r["value"] is None else orjson.dumps(r["value"], default=str).decode() \
            if isinstance(r["value"], dict | list) else str(r["value"])
        click.echo(f"{r['name']:<{width}}  {value:<40}  [{r['source']}]  {r['env']}")
