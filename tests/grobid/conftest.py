"""The GROBID-compatible service's servers, real processes on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.grobid.serving import Server, start


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Two workers; uploads limited to 2 MiB and 3 s (the hostile-upload tests)."""
    server = start(tmp_path_factory.mktemp("grobid-serve"), "--concurrency", "2",
                   env={"SANDCRAWLER_GROBID_SERVE_MAX_UPLOAD_MB": "2",
                        "SANDCRAWLER_GROBID_SERVE_UPLOAD_TIMEOUT": "3"})
    yield server
    server.stop()
