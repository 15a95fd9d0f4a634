"""A model file: a magic line, the length of a JSON header as 8 bytes
(big-endian), the JSON header, then CRFsuite's model bytes, which CRFsuite
opens from memory. The citation model's layout (``citations/crf/model.py``),
each kind of model with its own magic line.

The header records the CRFsuite part's size and SHA-256: CRFsuite trusts its
input, and a truncated or altered model crashes the process instead of
raising, so the bytes are checked before CRFsuite sees them.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sandcrawler.core.errors import ConfigError

_LENGTH = 8


def write(path: Path, magic: bytes, version: int, meta: Mapping[str, Any],
          crf_bytes: bytes) -> dict[str, Any]:
    """Write the file atomically (a temporary file in the same directory, then a
    rename); the header written is returned. Keys in ``meta`` are sorted, so the
    same model gives the same bytes."""
    header = {**meta, "format": version, "crf_size": len(crf_bytes),
              "crf_sha256": hashlib.sha256(crf_bytes).hexdigest()}
    encoded = json.dumps(header, sort_keys=True, ensure_ascii=False).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(magic + len(encoded).to_bytes(_LENGTH, "big") + encoded + crf_bytes)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return header


def read(path: Path, magic: bytes, version: int) -> tuple[dict[str, Any], bytes]:
    """(header, CRFsuite bytes) of a model file, checked; ConfigError when the
    file is missing, of another kind or version, truncated or altered."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ConfigError(f"cannot read model {path}: {e}") from e
    if not data.startswith(magic):
        raise ConfigError(f"{path} is not a {magic.decode().strip()} model file")
    start = len(magic) + _LENGTH
    size = int.from_bytes(data[len(magic):start], "big")
    try:
        meta = json.loads(data[start:start + size])
    except ValueError as e:
        raise ConfigError(f"{path}: corrupt model header: {e}") from e
    if not isinstance(meta, dict):
        raise ConfigError(f"{path}: corrupt model header")
    if meta.get("format") != version:
        raise ConfigError(f"{path}: model format {meta.get('format')}, expected {version}")
    buffer = data[start + size:]
    if (len(buffer) != meta.get("crf_size")
            or hashlib.sha256(buffer).hexdigest() != meta.get("crf_sha256")):
        raise ConfigError(f"{path}: corrupt model (truncated or altered CRFsuite data)")
    return meta, buffer
