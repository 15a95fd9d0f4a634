"""The settings' sections, one model per component (the platforms declare theirs
beside their helpers), and ``CoreSettings``, which holds them all. The
composition root hands each component only its own section (docs/configuration.md)."""

from __future__ import annotations

import ipaddress
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
)

ENV_PREFIX = "SANDCRAWLER_"
CONFIG_ENV = "SANDCRAWLER_CONFIG"

#: old flat name -> dotted name; the old names keep working everywhere
RENAMED = {"fetch_timeout": "http.timeout", "fetch_max_mb": "http.max_mb"}


def xdg_dir(var: str, fallback: str) -> Path:
    base = os.environ.get(var)
    return Path(base) if base else Path.home() / fallback


class Section(BaseModel):
    """One component's settings. Unknown keys are errors (a typo must not be
    silently ignored)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


#: a base URL that paths are appended to: kept without its trailing slash
BaseUrl = Annotated[str, AfterValidator(lambda url: url.rstrip("/"))]


class DatabaseSettings(Section):
    url: str = Field(
        "",
        description="SQLAlchemy URL; default: a SQLite file in data_dir. "
        "PostgreSQL: postgresql://user:pass@host/db",
    )


class StoreSettings(Section):
    url: str = Field(
        "",
        description="where files live: a directory (or file:// URL), or s3://BUCKET[/PREFIX]; "
        "default: data_dir/store",
    )
    fsync: bool = Field(
        True, description="local store: fsync each file before it becomes visible (crash-safe)"
    )
    schemes: dict[str, str] = Field(
        {}, description="more store URL schemes: scheme -> package.module:Class, a blob "
        "store with from_url (file:// and s3:// are built in)",
    )


class S3Settings(Section):
    endpoint_url: str | None = Field(
        None, description="S3 API endpoint (any S3-compatible server); default: AWS"
    )
    region: str = Field("us-east-1", description="S3 region name")
    access_key_id: str | None = Field(
        None, description="S3 access key; default: boto3's usual credential chain"
    )
    secret_access_key: str | None = Field(None, description="S3 secret key")
    part_size: int = Field(
        8 * 1024 * 1024, ge=5 * 1024 * 1024,
        description="bytes per part of S3 multipart uploads (objects larger than this)",
    )
    upload_concurrency: int = Field(
        4, ge=1, le=64, description="parts of one S3 multipart upload in flight at once"
    )


class GrobidSettings(Section):
    url: BaseUrl | None = Field(None, description="base URL of a GROBID server")
    timeout: float = Field(60.0, gt=0, description="seconds per GROBID request")
    concurrency: int = Field(4, ge=1, le=256, description="GROBID requests in flight")
    retries: int = Field(
        6, ge=0, description="retries when GROBID is busy (503) or unreachable, with back-off"
    )
    max_citations: int = Field(
        500, ge=1, description="citations per processCitationList request; longer lists are split"
    )
    max_pdf_mb: int = Field(
        256, ge=1, description="PDFs larger than this are not sent to GROBID (status too-large)"
    )
    consolidate_header: int = Field(
        0, ge=0, le=2, description="processFulltextDocument consolidateHeader (0, 1 or 2)"
    )
    include_raw_citations: bool = Field(True, description="fulltext: includeRawCitations")
    include_raw_affiliations: bool = Field(True, description="fulltext: includeRawAffiliations")
    segment_sentences: bool = Field(False, description="fulltext: segmentSentences")
    tei_coordinates: str = Field(
        "", description="fulltext: teiCoordinates, comma-separated element names (e.g. figure,ref)"
    )


class CitationSettings(Section):
    parser: str = Field(
        "auto",
        description="which citation parser to use (crf: embedded, grobid); "
        "auto = grobid when grobid.url is set, else crf",
    )
    model: Path | None = Field(
        None, description="model file for the crf parser; default: the one shipped with sandcrawler"
    )


class MatchSettings(Section):
    """Bibliographic matching against the catalog of Crossref works (docs/matching.md)."""

    index: Path | None = Field(
        None, description="the embedded match index (an SQLite file); default: "
        "data_dir/match/index.sqlite3")
    parser: str = Field(
        "crf", description="the citation parser that reads reference strings before "
        "matching (crf: embedded; grobid; auto)")
    update: bool = Field(
        True, description="match commands first bring the index up to date with the "
        "crossref table when it is behind")
    feed: bool = Field(
        True, description="persist crossref adds the works it writes to the index; off "
        "for a bulk load followed by one `match index` (about twice the load's speed)")
    engine: str = Field(
        "embedded", description="where candidates are retrieved: embedded (the SQLite file "
        "of match.index), or solr (a SolrCloud collection at match.engine_urls)")
    engine_urls: list[str] = Field(
        default_factory=list, description="the Solr nodes' base URLs, e.g. "
        '["https://solr1:8983/solr", "https://solr2:8983/solr"]; a node that does not '
        "answer is passed over for the next")
    engine_collection: str = Field(
        "sandcrawler-works", min_length=1, description="the alias matching reads and "
        "`match index --engine` loads; a rebuild loads a new collection, then moves it")
    engine_shards: int = Field(2, ge=1, le=1024,
                               description="shards of a collection `match index` creates")
    engine_replicas: int = Field(
        2, ge=1, le=16, description="copies of each shard (replicationFactor): 2 keeps "
        "matching going when a node is lost")
    engine_timeout: float = Field(10.0, gt=0, description="seconds per request to the engine")
    engine_concurrency: int = Field(
        8, ge=1, le=128, description="a batch's lookups in flight at once (Solr has no "
        "multi-search request)")
    engine_options: dict[str, str] = Field(
        default_factory=dict, description="TLS and credentials: username, password (HTTP "
        'basic), ca_file, verify ("false" for a test cluster only), e.g. '
        '{"username": "match", "password": "…", "ca_file": "/etc/ssl/solr-ca.pem"}')


class HttpSettings(Section):
    """Fetching over HTTP(S): files by URL, landing pages, platform APIs, downloads."""

    timeout: float = Field(
        30.0, gt=0, description="seconds to connect (at most 10) and between two reads of an "
        "answer; then fetch-timeout (was fetch_timeout)"
    )
    request_timeout: float = Field(
        30.0, gt=0, description="seconds for a whole request, headers and body, unless its body "
        "keeps coming at min_bytes_per_second; then fetch-timeout"
    )
    min_bytes_per_second: int = Field(
        4096, ge=0, description="past request_timeout, a body still coming at least this fast "
        "(measured over 10 s windows) goes on; 0: none does"
    )
    allow_networks: list[str] = Field(
        default_factory=list,
        description="networks (CIDR) the crawler may fetch from although they are not "
        "globally routable, e.g. [\"10.20.0.0/16\"] for an intranet repository; loopback, "
        "private and link-local addresses are blocked-address otherwise (http.routes' "
        "targets are never checked)",
    )
    max_mb: int = Field(
        1024, ge=1,
        description="bodies fetched by URL or read from WARCs larger than this are too-large "
        "(was fetch_max_mb)",
    )
    routes: dict[str, str] = Field(
        default_factory=dict,
        description="send requests for an origin to another, keeping the Host header, e.g. "
        '{"https://zenodo.org": "http://127.0.0.1:8080"} (a mirror, a proxy, or tests)',
    )

    @field_validator("allow_networks")
    @classmethod
    def _check_networks(cls, networks: list[str]) -> list[str]:
        for network in networks:
            try:
                ipaddress.ip_network(network.strip(), strict=False)
            except ValueError:
                raise ValueError(f"{network!r} is not a network like 10.20.0.0/16 or "
                                 "fd00:1::/64") from None
        return [n.strip() for n in networks]

    @field_validator("routes")
    @classmethod
    def _check_routes(cls, routes: dict[str, str]) -> dict[str, str]:
        for origin, target in routes.items():
            for url in (origin, target):
                if not url.startswith(("http://", "https://")) or url.rstrip("/").count("/") > 2:
                    raise ValueError(f"{url!r} is not an origin like https://host[:port]")
        return {o.rstrip("/").lower(): t.rstrip("/") for o, t in routes.items()}


class WarcSettings(Section):
    source: str | None = Field(
        None,
        description="where WARC files named in CDX lines are: a directory, or an http(s) URL "
        "prefix answering Range requests",
    )
    gzip_level: int = Field(
        1, ge=0, le=9,
        description="our web archive: gzip level of each WARC record (0 = plain .warc files)",
    )
    block_digest: bool = Field(
        True,
        description="our web archive: write WARC-Block-Digest (sha1 of HTTP headers and body: "
        "optional in WARC 1.1, a second sha1 pass over every body); WARC-Payload-Digest "
        "is always written",
    )


class KafkaSettings(Section):
    brokers: str | None = Field(None, description="Kafka bootstrap servers (host:port,...)")
    options: dict[str, str | int | float | bool] = Field(
        default_factory=dict,
        description="librdkafka properties for every client, e.g. "
        '{"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN"}',
    )
    message_format: Literal["sandcrawler", "original"] = Field(
        "sandcrawler",
        description="what the ingest-file and process-pdf workers publish: our results, or "
        "the original system's messages (ingest-file-results, grobid-output-pg, pdf-text) "
        "for its consumers (docs/original-messages.md)",
    )


class PdfSettings(Section):
    timeout: float = Field(
        120.0, gt=0, description="seconds one file may take; then its process is killed"
    )
    memory_limit_mb: int = Field(
        2048, ge=64, description="address space of the extracting process, in MiB"
    )
    max_text_chars: int = Field(
        5_000_000, ge=1, description="more text than this is text-too-large (metadata kept)"
    )
    thumbnails: dict[str, int] = Field(
        default_factory=lambda: {"thumb-small": 120, "thumb-medium": 250, "thumb-large": 500},
        description="page-0 thumbnails: resource kind -> width in pixels",
    )
    listing_width: int = Field(180, ge=16, description="width of the listing JPEG, in pixels")


class ExtractSettings(Section):
    """The embedded extraction cascade: a PDF's header and references without a
    GROBID server (docs/extraction.md)."""

    enabled: bool = Field(
        True, description="process and file ingest run the cascade on every usable PDF "
        "(beside GROBID when grobid.url is set)")
    reader: Literal["pdfalto", "pdfium"] = Field(
        "pdfalto", description="the layout reader: pdfalto (GROBID's own, run as a separate "
        "program) or pdfium (in process); the other is the fallback when it fails")
    timeout: float = Field(
        60.0, gt=0, description="seconds one PDF may take (sandcrawler extract); then its "
        "process is killed (status timeout)")
    memory_limit_mb: int = Field(
        2048, ge=64, description="address space of the extracting process, in MiB")
    max_pages: int = Field(
        300, ge=2, description="pages read of a longer PDF: the first half and the last "
        "half of this many (header and references), status partial")
    max_references: int = Field(
        20_000, ge=1, description="references parsed per PDF; past it, status partial")
    models: Path | None = Field(
        None, description="a directory of models trained with `sandcrawler models train` "
        "(<name>.crfmodel) used instead of the shipped ones; a model not in it is the "
        "shipped one")


class PdfTableSettings(Section):
    version: int = Field(
        0, ge=0, description="version in the PDF table's name wbgrp-journal-extract-<version>-<env>"
    )


class FilesetSettings(Section):
    max_total_size: int = Field(
        64 * 10**9, ge=1, description="datasets larger in total (bytes) are too-large-size"
    )
    max_file_count: int = Field(
        200, ge=1, description="datasets with more files are too-many-files"
    )
    web_max_files: int = Field(
        20, ge=1, description="strategy choice: more files than this go to the item store"
    )
    web_max_file_size: int = Field(
        128 * 2**20, ge=1,
        description="strategy choice: a file larger than this (bytes) sends the dataset "
        "to the item store",
    )
    web_max_total_size: int = Field(
        2**30, ge=1,
        description="strategy choice: datasets larger in total (bytes) go to the item store",
    )
    bundle_min_files: int = Field(
        10, ge=2,
        description="strategy choice: with at least this many files and a platform "
        "'download all' zip, archive the zip (a *-fileset-bundled strategy)",
    )
    bundle_max_ratio: float = Field(
        200.0, gt=1, description="a bundle member expanding more than this many times is a "
        "zip-bomb",
    )
    parallel_downloads: int = Field(
        8, ge=1, le=64,
        description="files of one dataset downloaded at once (1: one after another); each "
        "host still gets at most crawl.host_concurrency requests at a time",
    )
    tmp_dir: Path | None = Field(
        None, description="where downloads are spooled before they are archived; "
        "default: the system temporary directory"
    )


#: never crawled: archives of the web (their copies are not the publisher's), indexes
#: and aggregators that hold no full text of their own (the original system's list)
DEFAULT_BLOCKLIST_DOMAINS = (
    "web.archive.org", "archive.org", "www.archive.org", "fatcat.wiki", "scholar.archive.org",
    "www.semanticscholar.org", "semanticscholar.org", "doaj.org", "www.doaj.org",
    "www.jstor.org", "jstor.org", "www.researchgate.net", "researchgate.net",
    "www.academia.edu", "academia.edu", "scholar.google.com", "www.google.com",
    "books.google.com", "www.scopus.com", "www.webofscience.com", "www.mendeley.com",
)
#: URL patterns (regular expressions, searched) of pages that are never full text:
#: cookie-check redirects, log-in walls, share buttons
DEFAULT_BLOCKLIST_PATTERNS = (
    r"/cookieAbsent", r"cookieSet=1", r"error=cookies_not_supported", r"/errors/no-cookies",
    r"://[^/]*/(?:action/)?(?:login|signin|sign-in|ssostart)\b",
    r"://(?:www\.)?(?:facebook|twitter|x|linkedin)\.com/(?:sharer|share|intent)",
    r"^mailto:",
)


class ApiSettings(Section):
    """How the system reads its own records (existing ingest results, captures by
    URL, documents by sha1 or DOI, references): SQL on the database, or the
    read-only PostgREST API over HTTP (docs/api.md)."""

    reader: Literal["sql", "postgrest"] = Field(
        "sql",
        description="sql: query database.url; postgrest: query postgrest_url over HTTP "
        "(a worker on another machine then needs no database credentials)",
    )
    postgrest_url: BaseUrl | None = Field(
        None, description="base URL of the PostgREST API (`sandcrawler db api` sets it up), "
        "e.g. http://db-host:3000"
    )
    timeout: float = Field(30.0, gt=0, description="seconds per PostgREST request")


class CrawlSettings(Section):
    """File ingest's crawler: how far it follows links, how politely, and what it
    never fetches. Politeness (per-host concurrency, delay, back-off) applies to
    every fetch of the process; it is kept per process (with -j N, N gates).
    robots.txt and the blocklist apply where the crawler checks URLs."""

    max_hops: int = Field(
        6, ge=1, le=50,
        description="pages and files one request may fetch, redirects included; "
        "then max-hops-exceeded",
    )
    user_agent: str = Field(
        "sandcrawler", min_length=1,
        description="product name at the start of the User-Agent header (the version "
        "and contact are added)",
    )
    contact: str | None = Field(
        None,
        description="how a site's operator reaches you, sent in the User-Agent "
        "(mailto:you@example.org or a URL); set it before crawling sites you do not run",
    )
    operator: str | None = Field(
        None,
        description="who runs the crawl (a person or organisation), the operator named in "
        "each WARC file's warcinfo record (default: the contact)",
    )
    host_concurrency: int = Field(
        2, ge=1, le=64,
        description="requests in flight to one host, per process (-j N: N times this)",
    )
    host_delay: float = Field(
        0.25, ge=0, le=60,
        description="seconds between the starts of two requests to one host, per process; "
        "a robots.txt Crawl-delay raises it for that host (to at most 30 s)",
    )
    retry_after_max: float = Field(
        120.0, ge=0,
        description="most seconds one request waits in all for a busy host (429/503, after "
        "its Retry-After, else 1, 2, 4 s) before that answer is returned (terminal-bad-status)",
    )
    robots: bool = Field(
        True, description="honour robots.txt (RFC 9309; fetched once per origin per hour)"
    )
    robots_ignore_hosts: list[str] = Field(
        default_factory=list,
        description="hosts (exact names) whose robots.txt is not consulted (your own, or by "
        "agreement)",
    )
    blocklist_domains: list[str] = Field(
        default_factory=lambda: list(DEFAULT_BLOCKLIST_DOMAINS),
        description="hosts never fetched (a request or link to one is skip-url-blocklist)",
    )
    blocklist_patterns: list[str] = Field(
        default_factory=lambda: list(DEFAULT_BLOCKLIST_PATTERNS),
        description="regular expressions; a URL one matches is never fetched",
    )
    max_html_mb: int = Field(
        16, ge=1, description="landing pages larger than this are too-large"
    )
    record_timeout: float = Field(
        120.0, gt=0,
        description="seconds one request's crawl may take, every hop and page included; then "
        "fetch-timeout (a download still coming at http.min_bytes_per_second goes on)",
    )
    concurrency: int = Field(
        4, ge=1, le=64,
        description="requests of one batch crawled at once (so a slow host does not hold the "
        "others); the per-host limits still apply",
    )

    @field_validator("blocklist_patterns")
    @classmethod
    def _check_patterns(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as e:
                raise ValueError(f"{pattern!r} is not a regular expression ({e})") from None
        return patterns

    @field_validator("blocklist_domains", "robots_ignore_hosts")
    @classmethod
    def _lower_hosts(cls, hosts: list[str]) -> list[str]:
        return [h.strip().lower() for h in hosts if h.strip()]


def host_names(hosts: list[str]) -> list[str]:
    """``allowed_hosts`` of a web service (``serve``, ``grobid_serve``): names or
    addresses, lower-case, without brackets; "*" for any."""
    names = []
    for host in hosts:
        name = host.strip().lower()
        if name.startswith("[") and name.endswith("]"):
            name = name[1:-1]
        # one colon is a port (an IPv6 address has at least two)
        if not name or name.count(":") == 1 or re.search(r"[\s/@\[\]]", name):
            raise ValueError(f"{host!r} is not a host name: give a name or address "
                             "without scheme or port, or \"*\"")
        names.append(name)
    return names


class ServeSettings(Section):
    host: str = Field("127.0.0.1", description="address `sandcrawler serve` listens on; "
                      "anything but loopback needs serve.token")
    port: int = Field(8080, ge=0, le=65535, description="port `sandcrawler serve` listens on")
    token: str = Field("", description="secret every request must carry (Authorization: "
                       "Bearer TOKEN, or ?token=TOKEN once, then a cookie); required to "
                       "bind elsewhere than loopback; at least 16 characters of letters, "
                       "digits and -._~+/")
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="host names `sandcrawler serve` answers besides its own address (and "
        "localhost on loopback), e.g. the name a proxy forwards; \"*\": any (only behind a "
        "proxy that sets Host itself); others are refused (DNS rebinding)")
    workers: int = Field(40, ge=1, le=512,
                         description="threads answering requests at once (database reads)")
    replay_url: str = Field("", description="a pywb collection that replays our WARCs, e.g. "
                            "http://localhost:8080/sandcrawler: capture pages link to "
                            "{replay_url}/{timestamp}/{url}; empty: no link")

    @field_validator("replay_url")
    @classmethod
    def _replay_url(cls, url: str) -> str:
        url = url.strip()
        if url and not re.fullmatch(r"https?://[^\s/?#]+(/[^\s?#]*)?", url):
            raise ValueError(f"{url[:80]!r} is not an http(s) URL (a pywb collection's, "
                             "e.g. http://localhost:8080/sandcrawler)")
        return url.rstrip("/")

    @field_validator("allowed_hosts")
    @classmethod
    def _host_names(cls, hosts: list[str]) -> list[str]:
        return host_names(hosts)


class GrobidServeSettings(Section):
    """``sandcrawler grobid-serve``: GROBID's REST API answered by the embedded
    cascade (docs/grobid-service.md)."""

    host: str = Field("127.0.0.1", description="address `sandcrawler grobid-serve` listens "
                      "on; anything but loopback needs grobid_serve.token")
    port: int = Field(8070, ge=0, le=65535,
                      description="port `sandcrawler grobid-serve` listens on (GROBID's)")
    concurrency: int = Field(
        default_factory=lambda: os.cpu_count() or 1, ge=1, le=256,
        description="sandboxed workers (child processes): requests processed at once; "
        "a request that finds none free is answered 503 at once (default: the number "
        "of cores)")
    timeout: float = Field(60.0, gt=0, description="seconds one request's processing may "
                           "take (a PDF, a list of citations); then its worker is killed "
                           "and replaced, and the answer is 500 [TIMEOUT]")
    memory_limit_mb: int = Field(2048, ge=256, description="address space of each worker "
                                 "process, in MiB; over it the answer is 500")
    max_upload_mb: int = Field(256, ge=1, description="a request body (a PDF with its form) "
                               "larger than this is refused with 413 while it is read")
    upload_timeout: float = Field(60.0, gt=0, description="seconds a client may take to "
                                  "send a request's whole body; then 408")
    header_pages: int = Field(2, ge=1, le=100, description="pages processHeaderDocument "
                              "reads (GROBID's default end=2)")
    max_citations: int = Field(5000, ge=1, le=100_000, description="citations one "
                               "processCitationList request may hold; more is 400")
    token: str = Field("", description="secret every request must carry (Authorization: "
                       "Bearer TOKEN); required to bind elsewhere than loopback; at least "
                       "16 characters of letters, digits and -._~+/")
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="host names `sandcrawler grobid-serve` answers besides its own address "
        "(and localhost on loopback), e.g. the name a proxy forwards; \"*\": any")

    @field_validator("allowed_hosts")
    @classmethod
    def _host_names(cls, hosts: list[str]) -> list[str]:
        return host_names(hosts)


class WorkerSettings(Section):
    """The long-running Kafka consumers (``sandcrawler worker ...``)."""

    metrics_port: int | None = Field(
        None, ge=0, le=65535,
        description="serve Prometheus metrics on this port (GET /metrics); 0 = any free "
        "port (the start-up line says which); default: no metrics",
    )
    metrics_address: str = Field(
        "127.0.0.1", min_length=1,
        description="address the metrics port listens on (0.0.0.0 or :: for every interface)",
    )


class CoreSettings(BaseModel):
    """The settings every process has; ``sandcrawler.app.settings`` adds one
    section per platform. Section fields are the TOML tables. Built by ``load``
    (constructed directly, it reads nothing: defaults and the values given)."""

    model_config = ConfigDict(extra="forbid", frozen=True, validate_default=True)

    config_file: Path | None = Field(
        None, description="the TOML file these settings were read from"
    )
    data_dir: Path = Field(
        default_factory=lambda: xdg_dir("XDG_DATA_HOME", ".local/share") / "sandcrawler",
        description="local data directory (embedded database, store)",
    )
    env: str = Field("dev", description="deployment name used in topic names (prod, qa, dev)")
    batch_size: int | None = Field(
        None, ge=1,
        description="records per batch of every batch command and worker; default: each "
        "command's own (its --help says which)",
    )

    database: DatabaseSettings = DatabaseSettings()
    store: StoreSettings = StoreSettings()
    s3: S3Settings = S3Settings()
    grobid: GrobidSettings = GrobidSettings()
    citation: CitationSettings = CitationSettings()
    match: MatchSettings = MatchSettings()
    http: HttpSettings = HttpSettings()
    warc: WarcSettings = WarcSettings()
    kafka: KafkaSettings = KafkaSettings()
    pdf: PdfSettings = PdfSettings()
    extract: ExtractSettings = ExtractSettings()
    pdftable: PdfTableSettings = PdfTableSettings()
    fileset: FilesetSettings = FilesetSettings()
    crawl: CrawlSettings = CrawlSettings()
    api: ApiSettings = ApiSettings()
    serve: ServeSettings = ServeSettings()
    grobid_serve: GrobidServeSettings = GrobidServeSettings()
    worker: WorkerSettings = WorkerSettings()

    def model_post_init(self, _context: Any) -> None:
        # The embedded defaults live in the data directory, wherever that is.
        if not self.database.url:
            url = f"sqlite:///{self.data_dir / 'sandcrawler.sqlite3'}"
            object.__setattr__(self, "database", self.database.model_copy(update={"url": url}))
        if not self.store.url:
            url = str(self.data_dir / "store")
            object.__setattr__(self, "store", self.store.model_copy(update={"url": url}))
        if self.match.index is None:
            index = self.data_dir / "match" / "index.sqlite3"
            object.__setattr__(self, "match", self.match.model_copy(update={"index": index}))

    @classmethod
    def sections(cls) -> dict[str, type[Section]]:
        """Table name -> section model."""
        return {name: f.annotation for name, f in cls.model_fields.items()
                if isinstance(f.annotation, type) and issubclass(f.annotation, Section)}

    @classmethod
    def top_level(cls) -> list[str]:
        return [name for name in cls.model_fields if name not in cls.sections()]
