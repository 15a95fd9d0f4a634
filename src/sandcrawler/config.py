"""Settings: ``SANDCRAWLER_*`` environment variables over an optional TOML file over defaults.

The TOML file may group keys in tables; a table name is a prefix, so

    [grobid]
    url = "http://localhost:8070"

is the same setting as ``SANDCRAWLER_GROBID_URL``. The file is the one named by
``SANDCRAWLER_CONFIG`` (or the CLI's ``--config``), else ``./sandcrawler.toml``,
else ``$XDG_CONFIG_HOME/sandcrawler/config.toml``; none is needed.

With nothing configured everything is embedded: a data directory under
``$XDG_DATA_HOME`` and a SQLite database inside it.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from sandcrawler.errors import ConfigError

ENV_PREFIX = "SANDCRAWLER_"
CONFIG_ENV = "SANDCRAWLER_CONFIG"


def _xdg(var: str, fallback: str) -> Path:
    base = os.environ.get(var)
    return Path(base) if base else Path.home() / fallback


def default_config_paths() -> list[Path]:
    user_file = _xdg("XDG_CONFIG_HOME", ".config") / "sandcrawler" / "config.toml"
    return [Path("sandcrawler.toml"), user_file]


def find_config_file() -> Path | None:
    explicit = os.environ.get(CONFIG_ENV)
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise ConfigError(f"configuration file {path} (from {CONFIG_ENV}) does not exist")
        return path
    for path in default_config_paths():
        if path.is_file():
            return path
    return None


def _flatten(table: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in table.items():
        name = f"{prefix}{key}".replace("-", "_").lower()
        if isinstance(value, dict):
            flat.update(_flatten(value, prefix=f"{name}_"))
        else:
            flat[name] = value
    return flat


def read_config_file(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            raw = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"cannot read configuration file {path}: {e}") from e
    flat = _flatten(raw)
    unknown = sorted(set(flat) - set(Settings.model_fields) - {"config_file"})
    if unknown:
        raise ConfigError(
            f"unknown setting(s) in {path}: {', '.join(unknown)} "
            f"(known: {', '.join(sorted(Settings.model_fields))})"
        )
    return flat


class _TomlFileSource(PydanticBaseSettingsSource):
    """Reads the configuration file, if there is one, as the lowest-priority source."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ returns everything at once

    def __call__(self) -> dict[str, Any]:
        path = find_config_file()
        if path is None:
            return {}
        values = read_config_file(path)
        values["config_file"] = path
        return values


class Settings(BaseSettings):
    """Effective configuration. Field names are the env var names without the prefix."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

    config_file: Path | None = Field(
        None, description="the TOML file these settings were read from"
    )
    data_dir: Path = Field(
        default_factory=lambda: _xdg("XDG_DATA_HOME", ".local/share") / "sandcrawler",
        description="local data directory (embedded database, blobs)",
    )
    database_url: str = Field(
        "",
        description="SQLAlchemy URL; default: a SQLite file in data_dir. "
        "PostgreSQL: postgresql+psycopg://user:pass@host/db",
    )
    env: str = Field("dev", description="deployment name used in topic names (prod, qa, dev)")

    citation_parser: Literal["auto", "crf", "grobid"] = Field(
        "auto",
        description="which citation parser to use: crf (embedded) or grobid; "
        "auto = grobid when grobid_url is set, else crf",
    )
    citation_model: Path | None = Field(
        None, description="model file for the crf parser; default: the one shipped with sandcrawler"
    )
    grobid_url: str | None = Field(None, description="base URL of a GROBID server")
    grobid_timeout: float = Field(60.0, gt=0, description="seconds per GROBID request")
    grobid_concurrency: int = Field(4, ge=1, le=256, description="GROBID requests in flight")
    grobid_max_citations: int = Field(
        500, ge=1, description="citations per processCitationList request; longer lists are split"
    )
    grobid_consolidate_header: int = Field(
        0, ge=0, le=2, description="processFulltextDocument consolidateHeader (0, 1 or 2)"
    )
    grobid_include_raw_citations: bool = Field(True, description="fulltext: includeRawCitations")
    grobid_include_raw_affiliations: bool = Field(
        True, description="fulltext: includeRawAffiliations"
    )
    grobid_segment_sentences: bool = Field(False, description="fulltext: segmentSentences")
    grobid_tei_coordinates: str = Field(
        "", description="fulltext: teiCoordinates, comma-separated element names (e.g. figure,ref)"
    )
    grobid_max_pdf_mb: int = Field(
        256, ge=1, description="PDFs larger than this are not sent to GROBID (status too-large)"
    )
    grobid_retries: int = Field(
        6, ge=0, description="retries when GROBID is busy (503) or unreachable, with back-off"
    )

    fetch_timeout: float = Field(
        60.0, gt=0, description="seconds to connect and between bytes when fetching files by URL"
    )
    fetch_max_mb: int = Field(
        1024, ge=1, description="files fetched by URL or from WARCs larger than this: too-large"
    )
    warc_source: str | None = Field(
        None,
        description="where WARC files named in CDX lines are: a directory, or an http(s) URL "
        "prefix answering Range requests",
    )

    http_routes: dict[str, str] = Field(
        default_factory=dict,
        description="send requests for an origin to another, keeping the Host header, e.g. "
        '{"https://zenodo.org": "http://127.0.0.1:8080"} (a mirror, a proxy, or tests); '
        "in the environment as JSON",
    )

    zenodo_api_url: str = Field("https://zenodo.org/api", description="Zenodo REST API base")
    zenodo_hosts: list[str] = Field(
        ["zenodo.org", "sandbox.zenodo.org"], description="hosts whose pages are Zenodo records"
    )
    figshare_api_url: str = Field(
        "https://api.figshare.com/v2", description="figshare public API base"
    )
    figshare_download_url: str = Field(
        "https://ndownloader.figshare.com",
        description="figshare download host (its 'download all' zip of an article version)",
    )
    figshare_hosts: list[str] = Field(
        ["figshare.com"],
        description="hosts (and their subdomains) whose /articles/ pages are figshare items",
    )
    dataverse_hosts: list[str] = Field(
        ["dataverse.harvard.edu", "dataverse.rsu.lv", "data.qdr.syr.edu",
         "dataverse.nl", "borealisdata.ca", "dataverse.no", "demo.dataverse.org"],
        description="Dataverse installations; any host's /dataset.xhtml or /file.xhtml page "
        "with a persistentId also matches",
    )
    archiveorg_hosts: list[str] = Field(["archive.org"], description="archive.org hosts")
    archiveorg_metadata_url: str = Field(
        "https://archive.org/metadata", description="archive.org item metadata API base"
    )
    archiveorg_download_url: str = Field(
        "https://archive.org/download", description="archive.org file download base"
    )

    fileset_max_total_size: int = Field(
        64 * 10**9, ge=1, description="datasets larger in total (bytes) are too-large-size"
    )
    fileset_max_file_count: int = Field(
        200, ge=1, description="datasets with more files are too-many-files"
    )
    fileset_web_max_files: int = Field(
        20, ge=1, description="strategy choice: more files than this go to the item store"
    )
    fileset_web_max_file_size: int = Field(
        128 * 2**20, ge=1,
        description="strategy choice: a file larger than this (bytes) sends the dataset "
        "to the item store",
    )
    fileset_web_max_total_size: int = Field(
        2**30, ge=1,
        description="strategy choice: datasets larger in total (bytes) go to the item store",
    )
    fileset_bundle_min_files: int = Field(
        10, ge=2,
        description="strategy choice: with at least this many files and a platform "
        "'download all' zip, archive the zip (a *-fileset-bundled strategy)",
    )
    fileset_bundle_max_ratio: float = Field(
        200.0, gt=1,
        description="a bundle member expanding more than this many times is a zip-bomb",
    )
    fileset_tmp_dir: Path | None = Field(
        None, description="where downloads are spooled before they are archived; "
        "default: the system temporary directory"
    )
    warc_gzip_level: int = Field(
        1, ge=0, le=9,
        description="our web archive: gzip level of each WARC record (0 = plain .warc files)",
    )

    kafka_brokers: str | None = Field(None, description="Kafka bootstrap servers (host:port,...)")

    store_url: str = Field(
        "",
        description="where files live: a directory (or file:// URL), or s3://BUCKET[/PREFIX]; "
        "default: data_dir/store",
    )
    store_fsync: bool = Field(
        True, description="local store: fsync each file before it becomes visible (crash-safe)"
    )
    s3_endpoint_url: str | None = Field(
        None, description="S3 API endpoint (any S3-compatible server); default: AWS"
    )
    s3_region: str = Field("us-east-1", description="S3 region name")
    s3_access_key_id: str | None = Field(
        None, description="S3 access key; default: boto3's usual credential chain"
    )
    s3_secret_access_key: str | None = Field(None, description="S3 secret key")
    s3_part_size: int = Field(
        8 * 1024 * 1024,
        ge=5 * 1024 * 1024,
        description="bytes per part of S3 multipart uploads (objects larger than this)",
    )
    s3_upload_concurrency: int = Field(
        4, ge=1, le=64, description="parts of one S3 multipart upload in flight at once"
    )

    pdftable_version: int = Field(
        0, ge=0, description="version in the PDF table's name wbgrp-journal-extract-<version>-<env>"
    )

    batch_size: int = Field(100, ge=1, description="records per batch in the runner")

    @field_validator("grobid_url", "zenodo_api_url", "figshare_api_url", "figshare_download_url",
                     "archiveorg_metadata_url", "archiveorg_download_url")
    @classmethod
    def _strip_slash(cls, v: str | None) -> str | None:
        return v.rstrip("/") if v else None

    @field_validator("http_routes")
    @classmethod
    def _check_routes(cls, routes: dict[str, str]) -> dict[str, str]:
        for origin, target in routes.items():
            for url in (origin, target):
                if not url.startswith(("http://", "https://")) or url.rstrip("/").count("/") > 2:
                    raise ValueError(f"{url!r} is not an origin like https://host[:port]")
        return {o.rstrip("/").lower(): t.rstrip("/") for o, t in routes.items()}

    @model_validator(mode="after")
    def _defaults_in_data_dir(self) -> Settings:
        if not self.database_url:
            object.__setattr__(
                self, "database_url", f"sqlite:///{self.data_dir / 'sandcrawler.sqlite3'}"
            )
        if not self.store_url:
            object.__setattr__(self, "store_url", str(self.data_dir / "store"))
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, _TomlFileSource(settings_cls))

    @property
    def effective_citation_parser(self) -> str:
        if self.citation_parser != "auto":
            return self.citation_parser
        return "grobid" if self.grobid_url else "crf"

    @property
    def pdftable_name(self) -> str:
        return f"wbgrp-journal-extract-{self.pdftable_version}-{self.env}"

    def topic(self, name: str, prefix: str = "sandcrawler") -> str:
        return f"{prefix}-{self.env}.{name}"


def load_settings(**overrides: Any) -> Settings:
    """Settings from overrides (e.g. CLI options), environment, file and defaults."""
    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'settings'}: {err['msg']}"
            for err in e.errors()
        )
        raise ConfigError(f"invalid configuration: {problems}") from e


def mask_secret(name: str, value: Any) -> Any:
    """Hide passwords in URLs and values of secret-looking settings."""
    if value is None:
        return None
    text = str(value)
    if any(word in name for word in ("password", "secret", "token")):
        return "***" if text else text
    if "://" in text and "@" in text:
        scheme, rest = text.split("://", 1)
        creds, host = rest.rsplit("@", 1)
        if ":" in creds:
            user = creds.split(":", 1)[0]
            return f"{scheme}://{user}:***@{host}"
    return value


def describe_settings(settings: Settings, overrides: dict[str, Any] | None = None) -> list[dict]:
    """Each setting with its (masked) value and where it came from, for ``config show``."""
    overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
    file_values = read_config_file(settings.config_file) if settings.config_file else {}
    rows = []
    for name, field in Settings.model_fields.items():
        if name == "config_file":
            continue
        if name in overrides:
            source = "option"
        elif f"{ENV_PREFIX}{name.upper()}" in os.environ:
            source = "env"
        elif name in file_values:
            source = "file"
        else:
            source = "default"
        rows.append(
            {
                "name": name,
                "value": mask_secret(name, getattr(settings, name)),
                "source": source,
                "env": f"{ENV_PREFIX}{name.upper()}",
                "description": field.description or "",
            }
        )
    return rows
