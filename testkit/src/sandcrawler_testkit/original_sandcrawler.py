"""The original system's code (internetarchive/sandcrawler, ``python/sandcrawler/``):
its GROBID client (``grobid``), PostgREST client (``db``) and persist workers
(``persist``, with ``pdfextract`` and ``ingest_html``), run unchanged against our
GROBID-compatible service, read-only API and Kafka messages. Its repository states
no licence, so the files are not copied into this one: each is read, at a pinned
commit and checked against its SHA-256, from a checkout named by
``SANDCRAWLER_TEST_ORIGINAL_SANDCRAWLER``, else from the kit's cache, else fetched
from GitHub into that cache (tests/data/original_sandcrawler/SOURCE.md).

It is run only as a separate program: ``package`` lays out a directory holding a
package ``sandcrawler`` with the files as its modules and minimal stand-ins of the
modules they import that need the Internet Archive's infrastructure (``ia``,
``misc``, ``workers``, ``minio``, ``html_metadata``, psycopg2 recording what would
be written, poppler, selectolax's old backend), for ``PYTHONPATH``.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import urllib.request
from pathlib import Path

from sandcrawler_testkit._cache import tool_cache

REPOSITORY = "internetarchive/sandcrawler"
COMMIT = "e23e2bd50ace057dd5ea515704f9dc20216da739"
#: module -> the SHA-256 of its file at COMMIT (python/sandcrawler/<module>.py)
SHA256 = {
    "grobid": "dd813469924d2a0c8ee4b9eaadb2c99f4d8e79cf7321aa6542f6c636ffebe037",
    "db": "ceb8eb98a61b9351c89a488ecb77d14a701a6260f7f65f47bf3889911404795a",
    # its persist workers and what they parse with (tests/kafka/test_original_messages.py)
    "persist": "695e8ed116c22cae351dd7b285e49d6f813848ad54553ac8b0bcf01addb46a73",
    "pdfextract": "1f335a48defbc803a080c0930425edfa8bc81dabe9e54ef76b314b085d8f4820",
    "ingest_html": "036edf43595d088161652cb267093516ad824448bd9b233915764abf6ba60b0d",
}
ENV = "SANDCRAWLER_TEST_ORIGINAL_SANDCRAWLER"


def _path(module: str) -> str:
    return f"python/sandcrawler/{module}.py"


def _url(module: str) -> str:
    return f"https://raw.githubusercontent.com/{REPOSITORY}/{COMMIT}/{_path(module)}"

#: the sibling modules grobid.py imports (``from .ia import WaybackClient`` ...):
#: only what the GROBID client itself touches does anything
STUBS = {
    "__init__.py": '"""Stand-in package around the original system\'s grobid.py (tests only)."""\n',
    "ia.py": '''class WaybackClient:
    pass


class CdxApiClient:
    pass


class NoCaptureError(Exception):
    pass


class WaybackContentError(Exception):
    pass


def cdx_to_dict(cdx):
    raise NotImplementedError


def fix_transfer_encoding(file_meta, resource):
    raise NotImplementedError
''',
    "misc.py": '''import hashlib

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry


def requests_retry_session():
    """A session that retries failed connections (the original's retries too)."""
    session = requests.Session()
    adapter = HTTPAdapter(max_retries=Retry(total=3, connect=3, read=0, backoff_factor=0.2))
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def datetime_to_cdx(dt):
    return dt.strftime("%Y%m%d%H%M%S")


def parse_cdx_datetime(dt_str):
    raise NotImplementedError


def url_fuzzy_equal(left, right):
    return left == right


def gen_file_metadata(blob):
    return {"size_bytes": len(blob), "sha1hex": hashlib.sha1(blob).hexdigest(),
            "sha256hex": hashlib.sha256(blob).hexdigest(),
            "md5hex": hashlib.md5(blob).hexdigest(), "mimetype": "application/pdf"}
''',
    # db.py's PostgreSQL client: no database; each execute_values call (the
    # statement and the rows the original would write) is kept in extras.CALLS,
    # and every row is answered as an insert (xmax 0)
    "psycopg2/__init__.py": '''from . import extensions, extras  # noqa: F401


class _Connection:
    def cursor(self):
        return extensions.cursor()

    def commit(self):
        extras.CALLS.append(("COMMIT", []))


def connect(db_url):
    return _Connection()
''',
    "psycopg2/extensions.py": "class cursor:\n    pass\n",
    "psycopg2/extras.py": '''CALLS = []


def execute_values(cur, sql, rows, page_size=100, fetch=False):
    CALLS.append((sql, [list(row) for row in rows]))
    return [(0,) for _ in rows]
''',
    # pdfextract.py's PDF library: only process_pdf, which the tests do not run, uses it
    "poppler/__init__.py": "from . import document  # noqa: F401\n",
    "poppler/document.py": "class LockedDocumentError(Exception):\n    pass\n",
    # the original's HTML parser backend, which selectolax 1.x refuses to import:
    # ingest_html.py only names it in code the persist workers do not run
    "selectolax/__init__.py": "",
    "selectolax/parser.py": "class HTMLParser:\n    pass\n",
    # persist.py's blob store client: each put is kept in PUTS
    "minio.py": '''PUTS = []


class SandcrawlerMinioClient:
    def __init__(self, host_url, access_key, secret_key, default_bucket=None):
        self.default_bucket = default_bucket

    def put_blob(self, blob, folder, sha1hex=None, extension="", prefix="", bucket=None):
        PUTS.append({"folder": folder, "sha1hex": sha1hex, "extension": extension,
                     "size": len(blob)})
        return ("", "")
''',
    # ingest_html.py's page reader: only what its models and imports name
    "html_metadata.py": '''from typing import Optional

import pydantic


class BiblioMetadata(pydantic.BaseModel):
    title: Optional[str] = None


def html_extract_biblio(url, doc):
    raise NotImplementedError


def html_extract_resources(url, doc, adblock):
    raise NotImplementedError


def load_adblock_rules():
    raise NotImplementedError
''',
    "workers.py": '''from collections import Counter


class SandcrawlerWorker:
    def __init__(self, **kwargs):
        self.counts = Counter()
        self.sink = None


class SandcrawlerFetchWorker(SandcrawlerWorker):
    def __init__(self, wayback_client=None, **kwargs):
        super().__init__(**kwargs)
        self.wayback_client = wayback_client
''',
}


#: stand-ins of third-party packages (beside the package, not in it)
_TOP_LEVEL = ("psycopg2/", "poppler/", "selectolax/")


class OriginalUnavailable(Exception):
    """The file cannot be had here (no checkout, no cache, no network)."""


def _checked(data: bytes, module: str, where: str) -> bytes:
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256[module]:
        raise OriginalUnavailable(f"{where}: SHA-256 {digest}, not the pinned "
                                  f"{SHA256[module]}")
    return data


def _from_checkout(root: Path, module: str) -> bytes:
    path = _path(module)
    if (root / ".git").exists() or (root / "HEAD").exists():
        done = subprocess.run(["git", "-C", str(root), "show", f"{COMMIT}:{path}"],
                              capture_output=True, timeout=60, check=False)
        if done.returncode == 0:
            return _checked(done.stdout, module, f"{root} at {COMMIT}")
    return _checked((root / path).read_bytes(), module, str(root / path))


def original_file(module: str) -> bytes:
    """The pinned ``python/sandcrawler/<module>.py``'s bytes; OriginalUnavailable
    when none of the sources has it."""
    cached = tool_cache("original-sandcrawler", COMMIT) / f"{module}.py"
    checkout = os.environ.get(ENV)
    if checkout:
        return _from_checkout(Path(checkout), module)
    if cached.is_file():
        return _checked(cached.read_bytes(), module, str(cached))
    url = _url(module)
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            data = _checked(answer.read(), module, url)
    except OSError as e:
        raise OriginalUnavailable(f"no checkout ({ENV}), no cached copy ({cached}), and "
                                  f"{url} cannot be fetched: {e}") from None
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_suffix(".tmp")
    tmp.write_bytes(data)
    tmp.replace(cached)
    return data


def grobid_py() -> bytes:
    return original_file("grobid")


def package(directory: Path, modules: tuple[str, ...] = ("grobid",)) -> Path:
    """``directory/sandcrawler/``: the original ``modules`` (keys of ``SHA256``), byte
    for byte, and the stand-ins beside them; ``directory`` is what goes on
    ``PYTHONPATH``."""
    pkg = directory / "sandcrawler"
    pkg.mkdir(parents=True, exist_ok=True)
    for module in modules:
        (pkg / f"{module}.py").write_bytes(original_file(module))
    for name, text in STUBS.items():
        target = (directory if name.startswith(_TOP_LEVEL) else pkg) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return directory
