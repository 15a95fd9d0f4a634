"""Record statuses, one ``StrEnum`` per domain.

A record that cannot be handled gets a status, not an exception. Each enum is
documented by one status table in ``docs/`` (``tests/test_status_docs.py`` checks
them); a member equals and serialises as its string. Lower layers' statuses
pass through to the commands above them, and a command's table lists them
(docs/architecture.md, "Statuses").
"""

from __future__ import annotations

from enum import StrEnum
from typing import TypeAlias


class PipelineStatus(StrEnum):
    """Any command: the input line, the run, the database sink."""

    #: a ``RecordError`` raised without a status of its own (every raise names one)
    ERROR = "error"
    BAD_UTF8 = "bad-utf8"
    BAD_JSON = "bad-json"
    #: an input line over the size any record has (never read into memory)
    LINE_TOO_LONG = "line-too-long"
    #: a bug: the exception is reported and the run goes on
    INTERNAL_ERROR = "internal-error"
    #: the database refused this row (the rest of its batch is written)
    DB_REJECTED = "db-rejected"


class IdentifierStatus(StrEnum):
    """Identifiers that do not normalise (``sandcrawler.core.identifiers``)."""

    MISSING_DOI = "missing-doi"
    BAD_DOI = "bad-doi"
    BAD_SHA1 = "bad-sha1"
    BAD_PMID = "bad-pmid"
    BAD_PMCID = "bad-pmcid"
    BAD_ARXIV = "bad-arxiv"


class StoreStatus(StrEnum):
    """Names and stored data: the path rule, blob keys, resources, the catalogue,
    the PDF table, the item store."""

    BAD_NAME = "bad-name"
    UNSAFE_PATH = "unsafe-path"
    BAD_KEY = "bad-key"
    KEY_CONFLICT = "key-conflict"
    NOT_FOUND = "not-found"
    CORRUPT_DATA = "corrupt-data"
    BAD_UUID = "bad-uuid"
    UNKNOWN_RESOURCE_KIND = "unknown-resource-kind"
    BAD_KIND = "bad-kind"
    WRONG_KIND = "wrong-kind"
    MISSING_IDENTIFIER = "missing-identifier"
    BAD_IDENTIFIER = "bad-identifier"
    BAD_METADATA = "bad-metadata"
    UNKNOWN_FAMILY = "unknown-family"
    UNKNOWN_COLUMN = "unknown-column"
    BAD_VALUE = "bad-value"


class FetchStatus(StrEnum):
    """An HTTP(S) fetch (``sandcrawler.web.http.fetch``, ``sandcrawler.web.archive.captures``)."""

    BAD_URL = "bad-url"
    REDIRECT_LOOP = "redirect-loop"
    FETCH_ERROR = "fetch-error"
    #: the request (or the record making it) ran past its deadline, or its body
    #: came slower than the minimum rate (``http.request_timeout``, ...)
    FETCH_TIMEOUT = "fetch-timeout"
    #: the host is (or resolves to) an address that is not globally routable:
    #: loopback, private, link-local, ... (``http.allow_networks``)
    BLOCKED_ADDRESS = "blocked-address"
    HTTP_ERROR = "http-error"
    TOO_LARGE = "too-large"


class FileRecordStatus(StrEnum):
    """A file record, and reading the bytes it names (``sandcrawler.web.file_records``,
    ``sandcrawler.core.filemeta``, WARC records, zip members)."""

    MISSING_PATH = "missing-path"
    BAD_RECORD = "bad-record"
    #: the record carries an ``error`` from its source (and no ``error_status``)
    BAD_ZIP_MEMBER = "bad-zip-member"
    NO_WARC_SOURCE = "no-warc-source"
    BAD_WARC = "bad-warc"
    SHA1_MISMATCH = "sha1-mismatch"
    NOT_A_FILE = "not-a-file"
    UNREADABLE = "unreadable"


class CdxStatus(StrEnum):
    """A CDX line that names no usable capture (``sandcrawler.web.archive.cdx``)."""

    BAD_CDX = "bad-cdx"
    SKIP_HEADER = "skip-header"
    SKIP_REVISIT = "skip-revisit"
    SKIP_STATUS = "skip-status"


class BackfillStatus(StrEnum):
    """``pdftable backfill-cdx``, beyond the CDX line's own statuses."""

    SUCCESS = "success"
    SKIP_MIME = "skip-mime"


class SandboxStatus(StrEnum):
    """A sandboxed call that did not return (``sandcrawler.process.sandbox``)."""

    TIMEOUT = "timeout"
    MEMORY_LIMIT = "memory-limit"
    CRASHED = "crashed"


class PdfStatus(StrEnum):
    """What PDF extraction found (``pdf0:pdf_status``), and ``exists``: the file
    is processed already (``sandcrawler process``)."""

    SUCCESS = "success"
    NOT_PDF = "not-pdf"
    BAD_PDF = "bad-pdf"
    ENCRYPTED = "encrypted"
    EMPTY_PDF = "empty-pdf"
    EMPTY_PAGE0 = "empty-page0"
    TEXT_TOO_LARGE = "text-too-large"
    PARSE_ERROR = "parse-error"
    EXISTS = "exists"


class FulltextStatus(StrEnum):
    """GROBID full text of one PDF (``grobid0:status``, a result's ``grobid_status``),
    beyond GROBID's request failures (``ParserStatus``)."""

    SUCCESS = "success"
    NOT_RUN = "not-run"
    TOO_LARGE = "too-large"
    EMPTY = "empty"
    BAD_TEI = "bad-tei"


class ParserStatus(StrEnum):
    """A citation parser's (or GROBID's) failure for one record."""

    PARSE_ERROR = "parse-error"
    GROBID_ERROR = "grobid-error"
    GROBID_BAD_XML = "grobid-bad-xml"
    GROBID_TIMEOUT = "grobid-timeout"
    REF_COUNT_MISMATCH = "ref-count-mismatch"


class CitationStatus(StrEnum):
    """``citations parse``: one reference string."""

    SUCCESS = "success"
    EMPTY = "empty"
    #: longer than the parsers take: the biblio holds only the string
    TOO_LONG = "too-long"
    MISSING_UNSTRUCTURED = "missing-unstructured"


class RefsStatus(StrEnum):
    """Crossref works and grobid_refs rows (``parse-crossref-refs``, ``persist
    crossref``, ``persist grobid-refs``)."""

    SUCCESS = "success"
    EMPTY = "empty"
    SUCCESS_NO_REFS = "success-no-refs"
    NOT_CROSSREF_WORK = "not-crossref-work"
    BAD_INDEXED = "bad-indexed"
    MISSING_INDEXED = "missing-indexed"
    BAD_REFERENCES = "bad-references"
    BAD_WORK = "bad-work"
    BAD_ROW = "bad-row"


class MatchStatus(StrEnum):
    """Bibliographic matching (``match biblio``, ``match refs``, a document's
    ``match0``): how one biblio stands against the catalog. ``exact`` and
    ``strong`` are matches; the others name no DOI."""

    EXACT = "exact"
    STRONG = "strong"
    WEAK = "weak"
    #: two works fit equally well: the runner-up is reported beside the best
    AMBIGUOUS = "ambiguous"
    #: the best work is another version of the input's (the journal article of a
    #: conference paper, a year apart, in another venue): named as ``candidate``,
    #: never as the match
    OTHER_VERSION = "other-version"
    NO_MATCH = "no-match"
    #: the input has too little to match on (no usable title, nor journal +
    #: volume + page, nor an identifier with something to check it against)
    TOO_LITTLE = "too-little"
    #: the match index holds no works: nothing can be said either way
    EMPTY_CATALOG = "empty-catalog"
    #: the line is JSON but not a biblio (not an object, or a field of the wrong type)
    BAD_BIBLIO = "bad-biblio"


class DocumentMatchStatus(StrEnum):
    """A document's identification (the PDF table's ``match0:mstatus``), beyond
    the ``MatchStatus`` of its best source: its sources' answers do not add up
    to one work. docs/matching-documents.md."""

    #: the document's sources identify a work whose DOI is not the one the
    #: document already has (its catalogue entry's): nothing is overwritten
    DOI_CONFLICT = "doi-conflict"
    #: the landing page and the file (PDF, JATS) each match a work strongly, and
    #: not the same one
    SOURCES_DISAGREE = "sources-disagree"


class ExtractStatus(StrEnum):
    """The embedded extraction cascade's answer for one PDF (``sandcrawler
    extract``, ``extract0:xstatus``; docs/extraction.md). A PDF that gave no
    layout has the ``LayoutStatus`` instead (``no-text``, ``layout-failed``, ...),
    and a sandboxed run that did not return the ``SandboxStatus``."""

    SUCCESS = "success"
    #: over the page or reference limit: what was read is kept
    PARTIAL = "partial"
    NOT_PDF = "not-pdf"
    BAD_PDF = "bad-pdf"
    ENCRYPTED = "encrypted"
    EMPTY_PDF = "empty-pdf"


class FilesetStatus(StrEnum):
    """Dataset ingest (the fileset-ingest seed's statuses and ours), and
    persisting its results."""

    SUCCESS = "success"
    SUCCESS_FILE = "success-file"
    SUCCESS_EXISTING = "success-existing"
    SKIP_INGEST_TYPE = "skip-ingest-type"
    BAD_REQUEST = "bad-request"
    BAD_RESULT = "bad-result"
    TERMINAL_BAD_STATUS = "terminal-bad-status"
    NO_PLATFORM_MATCH = "no-platform-match"
    PLATFORM_SCOPE = "platform-scope"
    PLATFORM_RESTRICTED = "platform-restricted"
    PLATFORM_404 = "platform-404"
    ERROR_PLATFORM_API = "error-platform-api"
    PLATFORM_NO_BUNDLE = "platform-no-bundle"
    EMPTY_MANIFEST = "empty-manifest"
    TOO_MANY_FILES = "too-many-files"
    TOO_LARGE_SIZE = "too-large-size"
    ERROR_PLATFORM_DOWNLOAD = "error-platform-download"
    MISMATCH_SIZE = "mismatch-size"
    MISMATCH_MD5 = "mismatch-md5"
    MISMATCH_SHA1 = "mismatch-sha1"
    MISMATCH_SHA256 = "mismatch-sha256"
    #: another checksum the platform gave (sha512, a git blob id...) disagrees
    MISMATCH_CHECKSUM = "mismatch-checksum"
    BAD_BUNDLE = "bad-bundle"
    ZIP_BOMB = "zip-bomb"
    BUNDLE_INCOMPLETE = "bundle-incomplete"


class IngestFileStatus(StrEnum):
    """File ingest (``pdf``, ``xml``, ``html``): the crawl from a request's
    ``base_url`` to its full text, and persisting its results. ``docs/ingest.md``."""

    SUCCESS = "success"
    #: a hit recorded before (``ingest_file_result``); nothing fetched
    SUCCESS_EXISTING = "success-existing"
    SKIP_INGEST_TYPE = "skip-ingest-type"
    BAD_REQUEST = "bad-request"
    BAD_RESULT = "bad-result"
    #: a landing page without a link to the full text of the requested type
    NO_PDF_LINK = "no-pdf-link"
    NO_XML_LINK = "no-xml-link"
    NO_HTML_FULLTEXT = "no-html-fulltext"
    #: the terminal is neither the type asked for nor a page to look for it in
    WRONG_MIMETYPE = "wrong-mimetype"
    TERMINAL_BAD_STATUS = "terminal-bad-status"
    #: a full-text link leads back to a page already visited
    LINK_LOOP = "link-loop"
    MAX_HOPS_EXCEEDED = "max-hops-exceeded"
    SKIP_URL_BLOCKLIST = "skip-url-blocklist"
    #: a cookie wall, a "please enable JavaScript" page, a bot challenge
    BLOCKED_COOKIE = "blocked-cookie"
    #: a page whose HTML could not be parsed within the time and memory limits
    #: (``web.landing.PARSE_TIMEOUT``, ``PARSE_MEMORY``): built against the parser
    HTML_TOO_COMPLEX = "html-too-complex"
    ROBOTS_DISALLOWED = "robots-disallowed"


class ProcessingStatus(StrEnum):
    """What a full-text processor (``sandcrawler.ingest``: JATS XML, HTML) did with
    the file the crawl found (a result's ``processing.status``). ``docs/ingest.md``."""

    SUCCESS = "success"
    #: well-formed XML, but not a JATS article (nor a wrapper holding one)
    NOT_JATS = "not-jats"
    #: not well-formed XML, XML that declares entities (refused, never expanded), or
    #: XML nested deeper than ``ingest.safexml.MAX_DEPTH`` elements
    BAD_XML = "bad-xml"
    #: an HTML page with too little main text for an article: a landing page, a stub
    NO_MAIN_TEXT = "no-main-text"
    #: over the processor's size limit; not parsed
    TOO_LARGE = "too-large"
    #: an HTML page the processor could not finish within its time and memory limits
    HTML_TOO_COMPLEX = "html-too-complex"


class LayoutStatus(StrEnum):
    """Reading a PDF's layout (``sandcrawler.docparse``: pdfalto's ALTO, PDFium):
    why a PDF gave no layout tokens. docs/extraction.md."""

    #: the PDF has pages but no text on them (a scan without a text layer)
    NO_TEXT = "no-text"
    #: the layout reader ran past its time limit (killed)
    LAYOUT_TIMEOUT = "layout-timeout"
    #: the layout reader ran out of its memory allowance
    LAYOUT_MEMORY_LIMIT = "layout-memory-limit"
    #: the layout reader failed on the file (not a PDF it can read, a crash,
    #: output that cannot be read)
    LAYOUT_FAILED = "layout-failed"


#: any record's status: a member of one domain's enum. Results type their
#: ``status`` so, not with their own domain's enum alone, because a lower layer's
#: status passes through to them (``fetch-error`` in a file ingest result, ...)
Status: TypeAlias = (
    PipelineStatus | IdentifierStatus | StoreStatus | FetchStatus | FileRecordStatus
    | CdxStatus | BackfillStatus | SandboxStatus | PdfStatus | FulltextStatus | ParserStatus
    | CitationStatus | RefsStatus | FilesetStatus | IngestFileStatus | ProcessingStatus
    | MatchStatus | DocumentMatchStatus | ExtractStatus | LayoutStatus
)

#: the statuses of an ingested file (``hit`` is true)
INGEST_FILE_SUCCESS = frozenset({IngestFileStatus.SUCCESS, IngestFileStatus.SUCCESS_EXISTING})

#: the statuses of an archived dataset (``hit`` is true)
FILESET_SUCCESS = frozenset({FilesetStatus.SUCCESS, FilesetStatus.SUCCESS_FILE,
                             FilesetStatus.SUCCESS_EXISTING})

#: every domain, in the order the docs present them
DOMAINS: tuple[type[StrEnum], ...] = (
    PipelineStatus, IdentifierStatus, StoreStatus, FetchStatus, FileRecordStatus,
    CdxStatus, BackfillStatus, SandboxStatus, PdfStatus, FulltextStatus, ParserStatus,
    CitationStatus, RefsStatus, FilesetStatus, IngestFileStatus, ProcessingStatus,
    MatchStatus, DocumentMatchStatus, ExtractStatus, LayoutStatus,
)
