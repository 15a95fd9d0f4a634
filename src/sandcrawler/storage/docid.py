"""Document UUIDs: the persistent identifier that names a document's directory.

A document's UUID is a version-5 UUID over its strongest identifier (the sha1
of its primary file, else its DOI, else PMID, PMCID or arXiv id), so workers
that meet the same file agree without talking to each other. A UUID the
catalogue already holds for any of the document's identifiers is kept: a UUID
never changes once given (docs/storage.md, "Persistent identifiers").
"""

from __future__ import annotations

import uuid
from typing import Any

from sandcrawler.core.errors import InvalidName
from sandcrawler.core.identifiers import (
    normalize_arxiv,
    normalize_doi,
    normalize_pmcid,
    normalize_pmid,
    sha1_hex,
)
from sandcrawler.records.statuses import StoreStatus

#: fixed forever: changing it would rename every document
NAMESPACE = uuid.UUID("5c1b0a52-7d2e-4f43-9a4c-2f0e6d3b8a11")

#: identifier schemes in the order they are preferred, with their normalisers
SCHEMES = {
    "sha1": sha1_hex,
    "doi": normalize_doi,
    "pmid": normalize_pmid,
    "pmcid": normalize_pmcid,
    "arxiv": normalize_arxiv,
}


def parse_uuid(value: Any) -> str:
    """The canonical lower-case, hyphenated form; InvalidName for anything else."""
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, str) and len(value) == 36:
        try:
            parsed = uuid.UUID(value)
        except ValueError:
            pass
        else:
            if str(parsed) == value.lower():
                return str(parsed)
    raise InvalidName(
        f"not a UUID: {value!r} (expected 8-4-4-4-12 hex digits)", status=StoreStatus.BAD_UUID
    )


def document_uuid(**identifiers: str | None) -> str:
    """The UUID derived from the strongest identifier given (see the module docstring)."""
    unknown = set(identifiers) - set(SCHEMES)
    if unknown:
        raise ValueError(f"unknown identifier scheme(s): {', '.join(sorted(unknown))}")
    for scheme, normalise in SCHEMES.items():
        value = identifiers.get(scheme)
        if value:
            return str(uuid.uuid5(NAMESPACE, f"{scheme}:{normalise(value)}"))
    raise InvalidName(
        "a document needs at least one of: " + ", ".join(SCHEMES),
        status=StoreStatus.MISSING_IDENTIFIER,
    )


def shard_dir(doc_uuid: str) -> str:
    """``98/da/17/ff/<uuid>``: four levels of two hex digits, then the UUID."""
    u = parse_uuid(doc_uuid)
    return f"{u[0:2]}/{u[2:4]}/{u[4:6]}/{u[6:8]}/{u}"
