"""``load_object``: the one resolver of the ``module:attribute`` paths that
registries hold (the CLI's commands, workers' builders, store schemes, citation
parsers, file-ingest processors). A registry names what it does not want to
import yet; the module is imported when the entry is used."""

from __future__ import annotations

import importlib
from typing import Any


def load_object(path: str, package: str = "") -> Any:
    """The object ``module:attribute`` names (the module prefixed with ``package``)."""
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(package + module), attr)
