"""``sandcrawler web``: our web archive (the WARC files and their index) for the
tools of web archives."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from sandcrawler.cli.options import open_services
from sandcrawler.web.archive.cdxj import write_cdxj


@click.group()
def web() -> None:
    """Our web archive for other web-archive tools: the index as CDXJ.

    Every capture (pages, files, redirects, robots.txt) is a record in a WARC
    file of the blob store (warcs/…) and a row of the web_cdx table; `serve`
    also answers the wayback CDX server API at /cdx.
    """


@web.command("cdxj")
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
              default="-", show_default=True, help="Where to write the index (- for stdout).")
@click.option("--progress/--no-progress", default=None,
              help="Progress on stderr [default: when stderr is a terminal].")
def cdxj(output: Path, progress: bool | None) -> None:
    """Export the capture index as CDXJ, the index format pywb reads.

    One line per capture, `surt timestamp {json}` with url, mime, status,
    digest, length, offset and filename, sorted bytewise (as `LC_ALL=C sort`).
    filename is the WARC file's key in the store: give pywb the store's
    directory as its archive_paths. A file is written whole or not at all.

    \b
    Examples:
      sandcrawler web cdxj -o captures.cdxj
      sandcrawler web cdxj -o ~/pywb/collections/sc/indexes/index.cdxj
    """
    engine = open_services().engine
    show = sys.stderr.isatty() if progress is None else progress

    def report(done: int) -> None:
        if show:
            click.echo(f"\r{done:,} captures", err=True, nl=False)

    if str(output) == "-":
        count = write_cdxj(engine, sys.stdout.write, on_progress=report)
    else:
        partial = output.with_name(output.name + ".part")
        try:
            with partial.open("w", encoding="utf-8", newline="\n") as f:
                count = write_cdxj(engine, f.write, on_progress=report)
            partial.replace(output)
        except OSError as e:
            raise click.ClickException(f"cannot write {output}: {e.strerror or e}") from None
        finally:
            partial.unlink(missing_ok=True)
    if show:
        click.echo(err=True)
    click.echo(f"{count:,} captures written", err=True)
