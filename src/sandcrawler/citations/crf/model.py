"""The citation CRF model: one file holding the lexicons and the CRFsuite model.

File layout: a magic line, the length of a JSON header as 8 bytes (big-endian),
the JSON header (format, labels, lexicons, the attributes that carry weights,
training parameters, corpus summary, size and SHA-256 of the CRFsuite part),
then CRFsuite's own model bytes, opened from memory.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import pycrfsuite
from grobid_tei_xml.types import GrobidBiblio

from sandcrawler.citations.crf.biblio import build_biblio
from sandcrawler.citations.crf.corpus import LabelledRef
from sandcrawler.citations.crf.features import Featurizer, Lexicons
from sandcrawler.citations.crf.labels import OUTSIDE
from sandcrawler.citations.crf.tokens import Token, tokenize
from sandcrawler.core.errors import ConfigError

MAGIC = b"sandcrawler citation CRF\n"
FORMAT = 1
#: tokens labelled per string; a reference rarely has 150. Longer input (glued
#: references, prose) keeps its tail unlabelled so time per string stays bounded.
MAX_TOKENS = 400

DEFAULT_PARAMS: dict[str, Any] = {
    "c1": 0.1,
    "c2": 0.01,
    "max_iterations": 200,
    "feature.possible_transitions": True,
}


def default_model_path() -> Path:
    return Path(str(resources.files("sandcrawler.citations.crf") / "citations.crfmodel"))


@dataclass
class CrfModel:
    tagger: pycrfsuite.Tagger
    featurizer: Featurizer
    meta: dict[str, Any] = field(default_factory=dict)
    # CRFsuite reads the model in place from this buffer: it must live as long as
    # the tagger, or tagging reads freed memory
    buffer: bytes = b""

    @classmethod
    def load(cls, path: Path | str | None = None) -> CrfModel:
        path = Path(path) if path else default_model_path()
        try:
            data = path.read_bytes()
        except OSError as e:
            raise ConfigError(f"cannot read citation model {path}: {e}") from e
        if not data.startswith(MAGIC):
            raise ConfigError(f"{path} is not a sandcrawler citation model")
        start = len(MAGIC) + 8
        size = int.from_bytes(data[len(MAGIC) : start], "big")
        try:
            meta = json.loads(data[start : start + size])
        except ValueError as e:
            raise ConfigError(f"{path}: corrupt model header: {e}") from e
        if meta.get("format") != FORMAT:
            raise ConfigError(f"{path}: model format {meta.get('format')}, expected {FORMAT}")
        lexicons, attributes = meta.pop("lexicons", None), meta.pop("attributes", None)
        if not isinstance(lexicons, dict) or not isinstance(attributes, list):
            raise ConfigError(f"{path}: model header lacks its lexicons or attributes")
        buffer = data[start + size :]
        # CRFsuite trusts its input: a truncated or altered model crashes the process
        # instead of raising, so the bytes are checked against the header first
        if (len(buffer) != meta.get("crf_size")
                or hashlib.sha256(buffer).hexdigest() != meta.get("crf_sha256")):
            raise ConfigError(f"{path}: corrupt model (truncated or altered CRFsuite data)")
        tagger = pycrfsuite.Tagger()
        try:
            tagger.open_inmemory(buffer)
        except Exception as e:  # CRFsuite reports a bad model as a bare error
            raise ConfigError(f"{path}: corrupt CRFsuite model: {e}") from e
        featurizer = Featurizer(Lexicons(lexicons), frozenset(attributes))
        return cls(tagger, featurizer, meta, buffer)

    def label(self, text: str) -> tuple[list[Token], list[str]]:
        tokens = tokenize(text)
        if not tokens:
            return tokens, []
        head = tokens[:MAX_TOKENS]
        labels = self.tagger.tag(self.featurizer.sequence(head))
        labels.extend([OUTSIDE] * (len(tokens) - len(head)))
        return tokens, labels

    def parse(self, text: str) -> GrobidBiblio:
        tokens, labels = self.label(text)
        return build_biblio(text, tokens, labels)


def train(
    refs: list[LabelledRef],
    out: Path,
    params: dict[str, Any] | None = None,
    info: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Train on ``refs`` and write the model to ``out`` atomically. Deterministic:
    the same references in the same order give the same file."""
    if not refs:
        raise ConfigError("no training references")
    params = {**DEFAULT_PARAMS, **(params or {})}
    sequences = [(tokenize(r.text), r.token_labels()) for r in refs]
    lexicons = Lexicons.build(sequences)
    featurizer = Featurizer(lexicons)
    trainer = pycrfsuite.Trainer(verbose=False)
    for tokens, labels in sequences:
        if tokens:
            trainer.append(featurizer.sequence(tokens[:MAX_TOKENS]), labels[:MAX_TOKENS])
    trainer.set_params(params)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        crf_path = Path(tmp) / "model.crfsuite"
        trainer.train(str(crf_path))
        crf_bytes = crf_path.read_bytes()
        last = trainer.logparser.last_iteration or {}
        trained = pycrfsuite.Tagger()
        trained.open(str(crf_path))
        attributes = sorted({attr for attr, _ in trained.info().state_features})
        trained.close()
        meta = {
            "format": FORMAT,
            "labels": sorted({label for _, labels in sequences for label in labels}),
            "params": params,
            "references": len(refs),
            "tokens": sum(len(t) for t, _ in sequences),
            "iterations": last.get("num"),
            "active_features": last.get("active_features"),
            "crf_size": len(crf_bytes),
            "crf_sha256": hashlib.sha256(crf_bytes).hexdigest(),
            **(info or {}),
            "lexicons": lexicons.words,
            "attributes": attributes,
        }
        header = json.dumps(meta, sort_keys=True, ensure_ascii=False).encode()
        tmp_out = Path(tmp) / "out"
        with tmp_out.open("wb") as f:
            f.write(MAGIC + len(header).to_bytes(8, "big") + header + crf_bytes)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp_out, out)
    meta.pop("lexicons")
    meta.pop("attributes")
    return meta
