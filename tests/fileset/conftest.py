"""The dataset-ingest tests' one platform server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sandcrawler_testkit.platforms import PlatformServer
from sandcrawler_testkit.recorded import RECORDED


@pytest.fixture
def srv() -> Iterator[PlatformServer]:
    """The loopback platform server (every platform's API at its own routes), serving
    every recorded real answer; tests add invented answers of their own to it."""
    with PlatformServer() as server:
        server.add_recorded(*RECORDED.values())
        yield server
