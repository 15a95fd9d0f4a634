"""The ``sandcrawler`` command. Each command group is a module; none holds processing logic.

Exit status: 0 the run completed (records may have failed: see the summary);
1 error in configuration or input (an input whose first 5 records are all
unreadable included: ``pipeline/opening.py``), or a record failed under ``--fail-fast``;
2 usage error; 3 a service (database, GROBID, Kafka) failed; 130 interrupted.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

import click

from sandcrawler.cli.exits import EXIT_FAILED, EXIT_INFRASTRUCTURE, EXIT_INTERRUPTED
from sandcrawler.core.errors import InfrastructureError, SandcrawlerError
from sandcrawler.core.imports import load_object
from sandcrawler.version import __version__

#: command name -> ("module:attribute", its help's first sentence). A module is
#: imported only when its command runs or shows its own help, so `sandcrawler
#: --help` imports none of them and `sandcrawler persist ...` never pays for the
#: HTTP client (tests/cli/test_cli_startup.py checks each summary against its command).
COMMANDS: dict[str, tuple[str, str]] = {
    "catalogue": ("sandcrawler.cli.catalogue:catalogue",
                  "The catalogue of documents in the resource store."),
    "citations": ("sandcrawler.cli.citations:citations",
                  "Parse reference strings into structured biblios; train and evaluate the "
                  "embedded CRF citation model."),
    "config": ("sandcrawler.cli.config:config", "Inspect the configuration."),
    "db": ("sandcrawler.cli.db:db",
           "Create, upgrade and inspect the SQL database (SQLite or PostgreSQL)."),
    "extract": ("sandcrawler.cli.extract:extract",
                "Extract the header and the references of PDFs, without a GROBID server."),
    "grobid": ("sandcrawler.cli.grobid:grobid", "Check the configured GROBID server."),
    "grobid-serve": ("sandcrawler.cli.grobid_serve:grobid_serve",
                     "Answer GROBID's REST API with the embedded extraction cascade, so "
                     "GROBID's clients work unchanged without a GROBID server."),
    "ingest": ("sandcrawler.cli.ingest:ingest", "Ingest documents and datasets."),
    "kafka": ("sandcrawler.cli.kafka:kafka",
              "Kafka: the topics the workers use, checked and created from their registry."),
    "match": ("sandcrawler.cli.match:match",
              "Match biblios and references against the catalog of Crossref works."),
    "models": ("sandcrawler.cli.models:models",
               "The extraction cascade's CRF models: list, train on GROBID's corpora, "
               "evaluate."),
    "parse-crossref-refs": ("sandcrawler.cli.refs:parse_crossref_refs",
                            "Parse the unstructured references of Crossref works into "
                            "grobid_refs rows."),
    "pdftable": ("sandcrawler.cli.pdftable:pdftable",
                 "The PDF table: rows keyed by a file's sha1, in column families."),
    "persist": ("sandcrawler.cli.persist:persist", "Load JSON lines into the database."),
    "process": ("sandcrawler.cli.process:process",
                "Process files: metadata, and for PDFs text and thumbnails."),
    "serve": ("sandcrawler.cli.serve:serve",
              "Serve the read-only web pages: dashboard, documents, search, ingest results, "
              "captures and Crossref references, each also as JSON (?format=json)."),
    "store": ("sandcrawler.cli.store:store",
              "The blob store where documents and their resources live."),
    "web": ("sandcrawler.cli.web:web",
            "Our web archive for other web-archive tools: the index as CDXJ."),
    "worker": ("sandcrawler.cli.worker:worker", "Long-running Kafka consumers."),
}


class SandcrawlerGroup(click.Group):
    """Loads commands lazily; turns our exceptions into ``Error: ...`` and an exit
    status, never a traceback."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *super().list_commands(ctx)})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in COMMANDS and name not in self.commands:
            self.add_command(load_object(COMMANDS[name][0]), name)
        return super().get_command(ctx, name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The list of commands from their summaries here, importing none of them:
        what click would print from each command's own help."""
        names = [n for n in self.list_commands(ctx) if n in COMMANDS or n in self.commands]
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = []
        for name in names:
            if name in self.commands or name not in COMMANDS:
                command = self.commands[name]
                if command.hidden:
                    continue
                rows.append((name, command.get_short_help_str(limit)))
            else:
                rows.append((name, click.Command(name, help=COMMANDS[name][1])
                             .get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

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
    stdout; progress, per-record errors and a summary go to stderr. An input whose
    first 5 lines are all unreadable (not UTF-8, not JSON) is not what the command
    reads: one line says so and the exit status is 1. Settings come from
    SANDCRAWLER_* environment variables and an optional TOML file: see
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
