"""The ``sandcrawler`` command. Each command group is a module; none holds processing logic.

Exit status: 0 the run completed (records may have failed: see the summary);
1 error in configuration or input, or a record failed under ``--fail-fast``;
2 usage error; 3 a service (database, GROBID, Kafka) failed; 130 interrupted.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from typing import Any

import click

from sandcrawler.cli.exits import EXIT_FAILED, EXIT_INFRASTRUCTURE, EXIT_INTERRUPTED
from sandcrawler.errors import InfrastructureError, SandcrawlerError
from sandcrawler.version import __version__

#: command name -> "module:attribute"; modules are imported only when their command
#: runs, so `sandcrawler persist ...` never pays for the HTTP client and vice versa.
COMMANDS = {
    "catalogue": "sandcrawler.cli.catalogue:catalogue",
    "citations": "sandcrawler.cli.citations:citations",
    "config": "sandcrawler.cli.config:config",
    "db": "sandcrawler.cli.db:db",
    "grobid": "sandcrawler.cli.grobid:grobid",
    "ingest": "sandcrawler.cli.ingest:ingest",
    "kafka": "sandcrawler.cli.kafka:kafka",
    "parse-crossref-refs": "sandcrawler.cli.refs:parse_crossref_refs",
    "pdftable": "sandcrawler.cli.pdftable:pdftable",
    "persist": "sandcrawler.cli.persist:persist",
    "process": "sandcrawler.cli.process:process",
    "serve": "sandcrawler.cli.serve:serve",
    "store": "sandcrawler.cli.store:store",
    "worker": "sandcrawler.cli.worker:worker",
}


class SandcrawlerGroup(click.Group):
    """Loads commands lazily; turns our exceptions into ``Error: ...`` and an exit
    status, never a traceback."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *super().list_commands(ctx)})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in COMMANDS and name not in self.commands:
            module, attr = COMMANDS[name].split(":")
            self.add_command(getattr(importlib.import_module(module), attr), name)
        return super().get_command(ctx, name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except InfrastructureError as e:
            click.echo(f"Error: {e}", err=True)
            sys.exit(EXIT_INFRASTRUCTURE)
        except SandcrawlerError as e:
            click.echo(f"Error: {e}", err=True)
            sys.exit(EXIT_FAILED)
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            sys.exit(EXIT_INTERRUPTED)


@click.group(cls=SandcrawlerGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="sandcrawler")
@click.option(
    "--config",
    "config_file",
    type=click.Path(exists=True, dir_okay=False),
    help="TOML configuration file (default: ./sandcrawler.toml, "
    "~/.config/sandcrawler/config.toml; env SANDCRAWLER_CONFIG).",
)
@click.option("-v", "--verbose", count=True, help="More logging on stderr (-vv for debug).")
def main(config_file: str | None, verbose: int) -> None:
    """Harvest, archive, process and catalogue scholarly documents.

    Batch commands read JSON lines from FILE or stdin (-) and write JSON lines to
    stdout; progress, per-record errors and a summary go to stderr. Settings come
    from SANDCRAWLER_* environment variables and an optional TOML file: see
    `sandcrawler config show`.
    """
    if config_file:
        # Through the environment, so -j N worker processes read the same file.
        os.environ["SANDCRAWLER_CONFIG"] = config_file
    level = {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    logging.basicConfig(
        level=level, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    if not verbose:
        # urllib3 warns of each connection it retries; the record's status says how
        # the request ended, and -v shows the retries
        logging.getLogger("urllib3.connectionpool").setLevel(logging.ERROR)
