"""The original system's GROBID client (internetarchive/sandcrawler,
``python/sandcrawler/grobid.py``), run unchanged against our GROBID-compatible
service. Its repository states no licence, so the file is not copied into this
one: it is read, at a pinned commit and checked against its SHA-256, from a
checkout named by ``SANDCRAWLER_TEST_ORIGINAL_SANDCRAWLER``, else from the kit's
cache, else fetched from GitHub into that cache (tests/data/original_sandcrawler/SOURCE.md).

It is run only as a separate program: ``package`` lays out a directory holding
a package ``sandcrawler`` with the file as its ``grobid`` module and minimal
stand-ins of the sibling modules it imports (``ia``, ``misc``, ``workers``, which
need the Internet Archive's infrastructure), for ``PYTHONPATH``.
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
PATH = "python/sandcrawler/grobid.py"
SHA256 = "dd813469924d2a0c8ee4b9eaadb2c99f4d8e79cf7321aa6542f6c636ffebe037"
URL = f"https://raw.githubusercontent.com/{REPOSITORY}/{COMMIT}/{PATH}"
ENV = "SANDCRAWLER_TEST_ORIGINAL_SANDCRAWLER"

#: the sibling modules grobid.py imports (``from .ia import WaybackClient`` ...):
#: only what the GROBID client itself touches does anything
STUBS = {
    "__init__.py": '"""Stand-in package around the original system\'s grobid.py (tests only)."""\n',
    "ia.py": "class WaybackClient:\n    pass\n",
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


def gen_file_metadata(blob):
    return {"size_bytes": len(blob), "sha1hex": hashlib.sha1(blob).hexdigest(),
            "sha256hex": hashlib.sha256(blob).hexdigest(),
            "md5hex": hashlib.md5(blob).hexdigest(), "mimetype": "application/pdf"}
''',
    "workers.py": '''class SandcrawlerWorker:
    def __init__(self, **kwargs):
        self.sink = None


class SandcrawlerFetchWorker(SandcrawlerWorker):
    def __init__(self, wayback_client=None, **kwargs):
        super().__init__(**kwargs)
        self.wayback_client = wayback_client
''',
}


class OriginalUnavailable(Exception):
    """The file cannot be had here (no checkout, no cache, no network)."""


def _checked(data: bytes, where: str) -> bytes:
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        raise OriginalUnavailable(f"{where}: SHA-256 {digest}, not the pinned {SHA256}")
    return data


def _from_checkout(root: Path) -> bytes:
    if (root / ".git").exists() or (root / "HEAD").exists():
        done = subprocess.run(["git", "-C", str(root), "show", f"{COMMIT}:{PATH}"],
                              capture_output=True, timeout=60, check=False)
        if done.returncode == 0:
            return _checked(done.stdout, f"{root} at {COMMIT}")
    return _checked((root / PATH).read_bytes(), str(root / PATH))


def grobid_py() -> bytes:
    """The pinned file's bytes; OriginalUnavailable when none of the sources has it."""
    cached = tool_cache("original-sandcrawler", COMMIT) / "grobid.py"
    checkout = os.environ.get(ENV)
    if checkout:
        return _from_checkout(Path(checkout))
    if cached.is_file():
        return _checked(cached.read_bytes(), str(cached))
    try:
        with urllib.request.urlopen(URL, timeout=30) as answer:
            data = _checked(answer.read(), URL)
    except OSError as e:
        raise OriginalUnavailable(f"no checkout ({ENV}), no cached copy ({cached}), and "
                                  f"{URL} cannot be fetched: {e}") from None
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_suffix(".tmp")
    tmp.write_bytes(data)
    tmp.replace(cached)
    return data


def package(directory: Path) -> Path:
    """``directory/sandcrawler/``: the original ``grobid.py``, byte for byte, and the
    stand-ins beside it; ``directory`` is what goes on ``PYTHONPATH``."""
    pkg = directory / "sandcrawler"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "grobid.py").write_bytes(grobid_py())
    for name, text in STUBS.items():
        (pkg / name).write_text(text, encoding="utf-8")
    return directory
