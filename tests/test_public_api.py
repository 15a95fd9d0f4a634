"""The library surface: exactly these names are public, and each resolves."""

from __future__ import annotations

import subprocess
import sys

import sandcrawler

PUBLIC = {
    "BlobStore", "CITATION_PARSERS", "Catalogue", "CitationParser", "ConfigError",
    "FilesetIngestResult", "FilesetIngester", "InfrastructureError", "IngestRequest",
    "IngestStrategy", "Item", "Outcome", "PLATFORMS", "PdfExtract", "PdfTable",
    "RecordError", "RecordWorker", "Runner", "SandcrawlerError", "Services", "Settings",
    "WORKERS", "WorkerSpec", "__version__", "extract_pdf", "load_settings", "open_services",
}


def test_exported_names_are_pinned() -> None:
    assert set(sandcrawler.__all__) == PUBLIC


def test_every_name_resolves() -> None:
    for name in sandcrawler.__all__:
        assert getattr(sandcrawler, name) is not None, name
    assert issubclass(sandcrawler.ConfigError, sandcrawler.SandcrawlerError)


def test_unknown_name_is_an_attribute_error() -> None:
    try:
        _ = sandcrawler.nonsense  # type: ignore[attr-defined]
    except AttributeError as e:
        assert "nonsense" in str(e)
    else:
        raise AssertionError("sandcrawler.nonsense resolved")


def test_import_is_light() -> None:
    """``import sandcrawler`` loads none of the heavy libraries (every command
    imports the package first)."""
    code = ("import sys, sandcrawler; "
            "print(sorted(m for m in ('sqlalchemy', 'boto3', 'pypdfium2', 'urllib3') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_three_lines_of_the_readme(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Parse a reference, store a file and read the catalogue, without the CLI."""
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(b"%PDF-1.4\n% not much of a paper\n%%EOF\n")
    with sandcrawler.open_services() as services:
        [[biblio]] = services.citation_parser().parse_lists(
            [["Smith JA, Doe B. Effects of caffeine on sleep. N Engl J Med. 2001;345:1234-40."]])
        entry = services.catalogue.add_file(pdf, metadata={"DOI": "10.5555/Example"})
        row = services.catalogue.get(entry.uuid)
    assert biblio.title and "caffeine" in biblio.title.lower()
    assert row is not None and row.doi == "10.5555/example"
