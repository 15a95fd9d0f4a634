"""Normalised forms of the identifiers every layer compares and stores."""

from __future__ import annotations

import base64
import re
from typing import Any

from sandcrawler.core.errors import InvalidName, RecordError
from sandcrawler.records.statuses import IdentifierStatus

_DOI_PREFIXES = ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/",
                 "http://dx.doi.org/", "doi:")


#: Unicode's control characters (category Cc): C0, DEL and C1, nothing else
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def normalize_doi(value: Any) -> str:
    """``10.<prefix>/<suffix>``, lower-cased, without a resolver or ``doi:`` prefix.

    DOIs are compared, stored and looked up lower-cased on every path."""
    if not isinstance(value, str) or not value.strip():
        raise RecordError("work has no DOI", status=IdentifierStatus.MISSING_DOI)
    doi = value.strip().lower()
    for prefix in _DOI_PREFIXES:
        if doi.startswith(prefix):
            doi = doi[len(prefix) :]
    prefix, _, suffix = doi.partition("/")
    if not prefix.startswith("10.") or len(prefix) < 4 or not suffix.strip():
        raise RecordError(f"not a DOI: {_clip(value)!r}", status=IdentifierStatus.BAD_DOI)
    if len(doi) > MAX_DOI_CHARS:
        raise RecordError(f"not a DOI: {len(doi):,} characters (at most {MAX_DOI_CHARS:,})",
                          status=IdentifierStatus.BAD_DOI)
    if _CONTROL.search(doi):
        raise RecordError(f"not a DOI: {_clip(value)!r} has control characters",
                          status=IdentifierStatus.BAD_DOI)
    return doi


#: the longest DOI we take (Crossref's own are far shorter; this stops garbage,
#: not any DOI registered anywhere)
MAX_DOI_CHARS = 1000


def _clip(value: str, limit: int = 80) -> str:
    return value if len(value) <= limit else value[:limit] + "…"


_BASE32_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
_HEX = frozenset("0123456789abcdef")
#: RFC 4648 base32 digits (A-Z = 0-25, 2-7 = 26-31) onto int()'s base-32 digits (0-9a-v)
_BASE32_TO_INT_DIGITS = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", "0123456789abcdefghijklmnopqrstuv"
)


def sha1_key(value: Any) -> bytes:
    """The 20 raw bytes of a sha1 given as 40 hex digits, 32 base32 characters
    (optionally ``sha1:``-prefixed, any case) or the raw bytes themselves."""
    if isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value)
        if len(raw) == 20:
            return raw
        raise InvalidName(f"a raw sha1 is 20 bytes, not {len(raw)}",
                          status=IdentifierStatus.BAD_SHA1)
    if not isinstance(value, str):
        raise InvalidName(f"not a sha1: {value!r}", status=IdentifierStatus.BAD_SHA1)
    text = value.strip()
    if text[:5].lower() == "sha1:":
        text = text[5:]
    if len(text) == 40:
        lower = text.lower()
        if set(lower) <= _HEX:
            return bytes.fromhex(lower)
        raise InvalidName(f"not a hex sha1 (non-hex characters): {value!r}",
                          status=IdentifierStatus.BAD_SHA1)
    if len(text) == 32:
        upper = text.upper()
        if set(upper) <= _BASE32_ALPHABET:
            # 32 base32 digits are exactly 160 bits: as one base-32 integer this is
            # ~6x faster than base64.b32decode, which CDX back-fills call per line.
            return int(upper.translate(_BASE32_TO_INT_DIGITS), 32).to_bytes(20, "big")
        raise InvalidName(f"not a base32 sha1 (allowed: A-Z, 2-7): {value!r}",
                          status=IdentifierStatus.BAD_SHA1)
    raise InvalidName(
        f"not a sha1: {value!r} has {len(text)} characters "
        "(40 hex digits or 32 base32 characters expected)",
        status=IdentifierStatus.BAD_SHA1,
    )


def sha1_hex(value: Any) -> str:
    """40 lower-case hex digits: the form used in SQL and JSON."""
    return sha1_key(value).hex()


def sha1_base32(value: Any) -> str:
    """32 upper-case base32 characters: the form people read (and CDX files carry)."""
    return base64.b32encode(sha1_key(value)).decode("ascii")


def normalize_pmid(value: Any) -> str:
    text = str(value).strip()
    if text.lower().startswith("pmid:"):
        text = text[5:].strip()
    if not text.isascii() or not text.isdigit() or text.startswith("0"):
        raise InvalidName(f"not a PMID: {value!r}", status=IdentifierStatus.BAD_PMID)
    return text


def normalize_pmcid(value: Any) -> str:
    """``PMC`` followed by digits; a bare number is taken as a PMCID number."""
    text = str(value).strip().upper()
    if text.startswith("PMCID:"):
        text = text[6:].strip()
    digits = text[3:] if text.startswith("PMC") else text
    if not digits.isascii() or not digits.isdigit() or digits.startswith("0"):
        raise InvalidName(f"not a PMCID: {value!r}", status=IdentifierStatus.BAD_PMCID)
    return "PMC" + digits


_ARXIV_NEW = re.compile(r"^\d{4}\.\d{4,5}(v\d+)?$")
_ARXIV_OLD = re.compile(r"^[a-z][a-z.-]+(\.[a-z]{2})?/\d{7}(v\d+)?$")


def normalize_arxiv(value: Any) -> str:
    """An arXiv id without ``arXiv:`` prefix, e.g. ``2101.00001v2`` or ``hep-th/9901001``."""
    text = str(value).strip()
    if text.lower().startswith("arxiv:"):
        text = text[6:].strip()
    old_style = text.lower()
    if _ARXIV_NEW.match(text):
        return text
    if _ARXIV_OLD.match(old_style):
        return old_style
    raise InvalidName(f"not an arXiv id: {value!r}", status=IdentifierStatus.BAD_ARXIV)
