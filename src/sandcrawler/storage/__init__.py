"""Storage: the blob store (local, S3), the resource layout and catalogue, the PDF table.

Builders from settings live here so every command and worker opens storage the
same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sandcrawler.config import Settings
    from sandcrawler.storage.catalogue import Catalogue
    from sandcrawler.storage.pdftable import PdfTable


def open_catalogue(settings: Settings) -> Catalogue:
    from sandcrawler.db.engine import make_engine
    from sandcrawler.storage.blobs import open_blob_store
    from sandcrawler.storage.catalogue import Catalogue
    from sandcrawler.storage.resources import ResourceStore

    return Catalogue(make_engine(settings), ResourceStore(open_blob_store(settings)))


def open_pdftable(settings: Settings) -> PdfTable:
    from sandcrawler.db.engine import make_engine
    from sandcrawler.storage.pdftable import PdfTable

    return PdfTable(make_engine(settings), settings.pdftable_name)
