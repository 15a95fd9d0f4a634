"""The citation labels the CRF assigns, and how TEI annotations map onto them.

The names follow GROBID's citation model (``<author>``, ``<title>``, ``<journal>``,
...); ``O`` is text outside any field (punctuation, "In", "pp.").
"""

from __future__ import annotations

from collections.abc import Mapping

OUTSIDE = "O"

#: every label the model may emit, in a fixed order
LABELS = (
    OUTSIDE,
    "author",
    "title",
    "journal",
    "booktitle",
    "series",
    "editor",
    "date",
    "volume",
    "issue",
    "pages",
    "publisher",
    "location",
    "institution",
    "collaboration",
    "doi",
    "arxiv",
    "pmid",
    "pmcid",
    "pubnum",
    "web",
    "tech",
    "note",
)

_TITLE_LEVELS = {"a": "title", "j": "journal", "m": "booktitle", "s": "series"}
_SCOPES = {
    "vol": "volume",
    "volume": "volume",
    "volumes": "volume",
    "issue": "issue",
    "pp": "pages",
    "page": "pages",
    "pages": "pages",
}
_IDNOS = {
    "doi": "doi",
    "arxiv": "arxiv",
    "arxive": "arxiv",
    "pmid": "pmid",
    "pmc": "pmcid",
    "pmcid": "pmcid",
}
_PLAIN = {
    "author": "author",
    "authors": "author",
    "editor": "editor",
    "date": "date",
    "year": "date",
    "publisher": "publisher",
    "publishe": "publisher",
    "pubplace": "location",
    "orgname": "institution",
    "page": "pages",
    "volumes": "volume",
}


def label_for(tag: str, attrs: Mapping[str, str]) -> str | None:
    """The label of a TEI annotation element, ``None`` for elements that only hold
    other annotations or text (``bibl``, ``lb``) and the rare unknown tag.

    Both conventions of GROBID's training data are read: the newer
    ``biblScope unit="volume|issue|page"`` and the older ``type="vol|issue|pp"``.
    Misspelt attributes seen in the corpus (``leve="m"``, ``type="m"`` on a title)
    are read for what they obviously mean.
    """
    tag = tag.lower()
    if tag == "title":
        level = attrs.get("level") or attrs.get("leve") or attrs.get("type") or "a"
        return _TITLE_LEVELS.get(level.strip().lower(), "title")
    if tag == "biblscope":
        kind = (attrs.get("unit") or attrs.get("type") or attrs.get("level") or "").strip().lower()
        return _SCOPES.get(kind)
    if tag == "idno":
        return _IDNOS.get((attrs.get("type") or "").strip().lower(), "pubnum")
    if tag == "ptr":
        return "web"
    if tag == "note":
        return "tech" if (attrs.get("type") or "").lower() == "report" else "note"
    if tag == "orgname" and (attrs.get("type") or "").lower() == "collaboration":
        return "collaboration"
    return _PLAIN.get(tag)
