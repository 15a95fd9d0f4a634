"""The one CRF tagger: a CRFsuite model with its file header, loaded, trained, tagging.

Every model of the project (the citation parser's, the cascade's layout models, the
name and affiliation models) is a :class:`CrfTagger`; they differ in the attributes
they compute and the magic line of their files. File layout: the magic line, the
length of a JSON header as 8 bytes (big-endian), the JSON header, then CRFsuite's
model bytes, opened from memory (docs/extraction.md, "Notes by module").
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pycrfsuite

from sandcrawler.core.errors import ConfigError

#: the header's ``format`` every kind of model file has today
FORMAT = 1
_LENGTH = 8

#: what every model trains with; each kind adds its own c1, c2 and iterations
BASE_PARAMS: dict[str, Any] = {"feature.possible_transitions": True}

T = TypeVar("T")

#: one sequence: the attributes of each item, and a label per item when training
Attributes = Sequence[Sequence[str]]


@dataclass(frozen=True, slots=True)
class ModelKind:
    """A kind of model file: its magic line, and its name in messages."""

    name: str
    magic: bytes


class CrfTagger:
    """A CRFsuite model opened from memory, and the header of its file."""

    def __init__(self, kind: ModelKind, header: dict[str, Any], crf_bytes: bytes,
                 source: str = "model") -> None:
        self.kind = kind
        self.header = header
        self.source = source
        # CRFsuite reads the model in place from this buffer: it must live as long as
        # the tagger, or tagging reads freed memory
        self.crf_bytes = crf_bytes
        self._tagger = pycrfsuite.Tagger()
        try:
            self._tagger.open_inmemory(crf_bytes)
        except Exception as e:  # CRFsuite reports a bad model as a bare error
            raise ConfigError(f"{source}: corrupt CRFsuite model: {e}") from e

    @property
    def version(self) -> str:
        """The first 12 hex digits of the CRFsuite part's SHA-256."""
        return str(self.header.get("crf_sha256", ""))[:12]

    def labels(self) -> list[str]:
        return list(self._tagger.labels())

    def state_attributes(self) -> list[str]:
        """The attributes that carry a weight for some label, sorted."""
        return sorted({attr for attr, _ in self._tagger.info().state_features})

    def take(self, key: str, kind: type[T]) -> T:
        """Remove ``key`` from the header and return it: data the model's features
        need (lexicons, attributes), too large to keep twice."""
        value = self.header.pop(key, None)
        if not isinstance(value, kind):
            raise ConfigError(f"{self.source}: model header lacks its {key}")
        return value

    def tag(self, sequence: Attributes) -> list[str]:
        """One label per item of ``sequence``."""
        if not sequence:
            return []
        return list(self._tagger.tag(sequence))

    @classmethod
    def load(cls, path: Path, kind: ModelKind) -> CrfTagger:
        """A model file, checked; ConfigError when the file is missing, of another
        kind or format, truncated or altered."""
        try:
            data = path.read_bytes()
        except OSError as e:
            raise ConfigError(f"cannot read {kind.name} model {path}: {e}") from e
        if not data.startswith(kind.magic):
            raise ConfigError(f"{path} is not a sandcrawler {kind.name} model file")
        start = len(kind.magic) + _LENGTH
        size = int.from_bytes(data[len(kind.magic):start], "big")
        try:
            header = json.loads(data[start:start + size])
        except ValueError as e:
            raise ConfigError(f"{path}: corrupt model header: {e}") from e
        if not isinstance(header, dict):
            raise ConfigError(f"{path}: corrupt model header")
        if header.get("format") != FORMAT:
            raise ConfigError(f"{path}: model format {header.get('format')}, expected {FORMAT}")
        crf_bytes = data[start + size:]
        # CRFsuite trusts its input: a truncated or altered model crashes the process
        # instead of raising, so the bytes are checked against the header first
        if (len(crf_bytes) != header.get("crf_size")
                or hashlib.sha256(crf_bytes).hexdigest() != header.get("crf_sha256")):
            raise ConfigError(f"{path}: corrupt model (truncated or altered CRFsuite data)")
        return cls(kind, header, crf_bytes, str(path))

    @classmethod
    def train(cls, kind: ModelKind, sequences: Iterable[tuple[Attributes, Sequence[str]]],
              params: Mapping[str, Any]) -> CrfTagger:
        """A model trained on (attributes, labels) sequences with CRFsuite's L-BFGS;
        its header holds the parameters, iterations and active features. Deterministic:
        the same sequences in the same order give the same model."""
        trainer = pycrfsuite.Trainer(verbose=False)
        for attributes, labels in sequences:
            trainer.append(attributes, labels)
        trainer.set_params(dict(params))
        with tempfile.TemporaryDirectory(prefix="sandcrawler-crf-") as tmp:
            crf_path = Path(tmp) / "model.crfsuite"
            trainer.train(str(crf_path))
            crf_bytes = crf_path.read_bytes()
        last = trainer.logparser.last_iteration or {}
        header = {"params": dict(params), "iterations": last.get("num"),
                  "active_features": last.get("active_features")}
        return cls(kind, header, crf_bytes)

    def save(self, path: Path, header: Mapping[str, Any]) -> dict[str, Any]:
        """Write the model with ``header`` added to its own, atomically (a temporary
        file in the same directory, then a rename); the header written is returned.
        Keys are sorted, so the same model gives the same bytes."""
        crf = self.crf_bytes
        full = {**self.header, **header, "format": FORMAT, "crf_size": len(crf),
                "crf_sha256": hashlib.sha256(crf).hexdigest()}
        encoded = json.dumps(full, sort_keys=True, ensure_ascii=False).encode()
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(self.kind.magic + len(encoded).to_bytes(_LENGTH, "big") + encoded + crf)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.header = full
        return dict(full)


class TaggedModel:
    """What a model built on the tagger (``tagger``) shows of it: its file header
    and version."""

    tagger: CrfTagger

    @property
    def meta(self) -> dict[str, Any]:
        return self.tagger.header

    @property
    def version(self) -> str:
        return self.tagger.version
