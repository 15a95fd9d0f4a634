"""Normalised forms of the identifiers every layer compares and stores."""

from __future__ import annotations

from typing import Any

from sandcrawler.errors import RecordError

_DOI_PREFIXES = ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/",
                 "http://dx.doi.org/", "doi:")


def normalize_doi(value: Any) -> str:
    """``10.<prefix>/<suffix>``, lower-cased, without a resolver or ``doi:`` prefix.

    DOIs are compared, stored and looked up lower-cased on every path."""
    if not isinstance(value, str) or not value.strip():
        raise RecordError("work has no DOI", status="missing-doi")
    doi = value.strip().lower()
    for prefix in _DOI_PREFIXES:
        if doi.startswith(prefix):
            doi = doi[len(prefix) :]
    if not doi.startswith("10.") or "/" not in doi:
        raise RecordError(f"not a DOI: {value!r}", status="bad-doi")
    return doi
