"""The one way a test skips for want of a real service or data."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def unavailable(reason: str, service: str) -> NoReturn:
    """A real service cannot run here: skip, or fail where the run requires it
    (``SANDCRAWLER_TEST_REQUIRE_<SERVICE>=1``, as CI sets for every service)."""
    require = f"SANDCRAWLER_TEST_REQUIRE_{service}"
    if os.environ.get(require) == "1":
        pytest.fail(f"{reason}, and {require}=1")
    pytest.skip(reason)
