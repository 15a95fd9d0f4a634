"""The cascade's CRF models on the one tagger (``sandcrawler.tagging.crf``): the
layout models over GROBID's feature columns (``columns``) and the name and
affiliation models over plain text (``text``); their files are ``../models/``."""

from importlib import resources
from pathlib import Path

from sandcrawler.core.moved import forward_attributes


def shipped_model_path(name: str) -> Path:
    """Where the package keeps model ``name``'s file (``docparse/models/``)."""
    return Path(str(resources.files("sandcrawler.docparse") / "models" / f"{name}.crfmodel"))


# this package was a module: its names still resolve here, for one release
__getattr__ = forward_attributes("sandcrawler.docparse.crf")
