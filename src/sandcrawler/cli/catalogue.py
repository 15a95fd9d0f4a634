"""``sandcrawler catalogue``: the documents in the resource store, by UUID and identifier."""

from __future__ import annotations

import sys

import click

from sandcrawler.cli.options import echo_json, open_services
from sandcrawler.core.errors import NotFound


@click.group()
def catalogue() -> None:
    """The catalogue of documents in the resource store.

    Each document's <uuid>.metadata.json (with the UUID as "id") is the truth;
    the catalogue table indexes them by UUID, sha1, DOI, PMID, PMCID and arXiv
    id, and `rebuild` re-derives it from the store alone.
    """


@catalogue.command("get")
@click.argument("identifier")
@click.option("--no-metadata", is_flag=True, help="Only the catalogue row, not the metadata.")
def get(identifier: str, no_metadata: bool) -> None:
    """Print the document(s) for IDENTIFIER as JSON lines.

    IDENTIFIER is a UUID, a DOI, a sha1 (hex or base32), or a prefixed id:
    doi:…, pmid:…, pmcid:PMC…, arxiv:…, sha1:…. Exit 1 if nothing matches."""
    cat = open_services().catalogue
    uuids = cat.resolve(identifier)
    if not uuids:
        raise NotFound(f"no document for {identifier} in the catalogue")
    for doc in uuids:
        entry = cat.get(doc)
        assert entry is not None
        out = entry.to_json(cat.paths(entry))
        if not no_metadata and "metadata" in entry.resources:
            out["metadata"] = cat.metadata(doc)
        echo_json(out)


@catalogue.command("export")
@click.option("--metadata", "with_metadata", is_flag=True,
              help="Print each document's metadata.json (the union of them) instead of the rows.")
def export(with_metadata: bool) -> None:
    """Print the catalogue as JSON lines, in UUID order."""
    cat = open_services().catalogue
    for entry in cat.entries():
        if with_metadata:
            if "metadata" in entry.resources:
                echo_json(cat.metadata(entry.uuid))
        else:
            echo_json(entry.to_json(cat.paths(entry)))


@catalogue.command("rebuild")
@click.option("--progress/--no-progress", default=None,
              help="Progress on stderr [default: when stderr is a terminal].")
def rebuild(progress: bool | None) -> None:
    """Re-derive the catalogue table from the files in the store.

    Lists the store, reads every metadata file (hashing the primary file where
    the metadata has no sha1), upserts the rows and removes rows of documents
    no longer in the store."""
    cat = open_services().catalogue
    show = sys.stderr.isatty() if progress is None else progress

    def report(done: int) -> None:
        if show:
            click.echo(f"\r{done:,} documents", err=True, nl=False)

    counts = cat.rebuild(on_progress=report)
    if show:
        click.echo(err=True)
    click.echo(
        f"catalogue rebuilt from {cat.resources.blobs.url}: "
        + ", ".join(f"{k} {v:,}" for k, v in counts.items()),
        err=True,
    )
