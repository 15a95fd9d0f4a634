"""Old import paths of modules that moved, kept for one release.

``import sandcrawler.kafka_admin`` still works: it warns (``DeprecationWarning``)
and gives a module whose names are the new module's. Nothing is copied, so a
class has one identity whichever path imported it. Drop this table in 0.3.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

#: old module (under ``sandcrawler.``) -> where it lives now
MOVED: dict[str, str] = {
    "citations.crf.tokens": "tagging.tokens",
    "docparse.affiliations": "docparse.assembly.affiliations",
    "docparse.cascade": "docparse.assembly.cascade",
    "docparse.crffile": "tagging.crf",
    "docparse.derived": "docparse.features.derived",
    "docparse.grobid_corpus": "docparse.training.grobid_corpus",
    "docparse.header": "docparse.assembly.header",
    "docparse.layout_alto": "docparse.layout.alto",
    "docparse.layout_geometry": "docparse.layout.geometry",
    "docparse.layout_pdfium": "docparse.layout.pdfium",
    "docparse.lexicon": "docparse.features.lexicon",
    "docparse.names": "docparse.assembly.names",
    "docparse.parity": "docparse.features.parity",
    "docparse.pdfium_calls": "docparse.layout.pdfium_calls",
    "docparse.pdfium_drawings": "docparse.layout.pdfium_drawings",
    "docparse.references": "docparse.assembly.references",
    "docparse.scoring": "tagging.scoring",
    "docparse.tei": "docparse.assembly.tei",
    "docparse.text": "docparse.layout.text",
    "docparse.textmodels": "docparse.training.text_models",
    "docparse.tokens": "docparse.layout.tokens",
    "errors": "core.errors",
    "file_records": "web.file_records",
    "filemeta": "core.filemeta",
    "grobid_client": "grobid.client",
    "identifiers": "core.identifiers",
    "imports": "core.imports",
    "ingest.references": "refs.reading",
    "ingest.safexml": "core.safexml",
    "jsontext": "core.jsontext",
    "kafka_admin": "kafka.admin",
    "kafka_topics": "kafka.topics",
    "lifetime": "process.lifetime",
    "lifetime_preload": "process.lifetime_preload",
    "loopback": "web.http.loopback",
    "match.refs": "match.resolving",
    "match.refs_source": "match.resolve_source",
    "match.refs_worker": "match.resolve_worker",
    "match.solr_http": "match.solr.connections",
    "memory": "process.memory",
    "mime": "core.mime",
    "paths": "core.paths",
    "pdf.extract": "pdf.info",
    "pdf.extraction": "pdf.extractor",
    "refs.clean": "refs.repair",
    "refs.crossref": "refs.crossref_works",
    "refs.worker": "refs.parse_workers",
    "retry": "core.retry",
    "sandbox": "process.sandbox",
    "spool": "core.spool",
    "textfix": "core.textfix",
    "timestamps": "core.timestamps",
    "web.addresses": "web.http.addresses",
    "web.biblio": "web.html.biblio",
    "web.bounded": "web.html.bounded",
    "web.cdx": "web.archive.cdx",
    "web.cdx_server": "web.archive.cdx_server",
    "web.cdxj": "web.archive.cdxj",
    "web.connections": "web.http.connections",
    "web.deadlines": "web.http.deadlines",
    "web.fetch": "web.http.fetch",
    "web.fetch_errors": "web.http.errors",
    "web.hosts": "web.http.hosts",
    "web.landing": "web.html.landing",
    "web.link_rules": "web.html.link_rules",
    "web.postgrest": "readers.postgrest",
    "web.urls": "web.http.urls",
    "web.warc": "web.archive.warc",
    "web.warc_writer": "web.archive.warc_writer",
    "work": "core.work",
}
#: old modules split in several: the stand-in looks a name up in each, in order
SPLIT: dict[str, tuple[str, ...]] = {
    "db.reader": ("db.queries", "readers.base", "readers.sql"),
    "docparse.textcrf": ("docparse.crf.text", "docparse.features.text"),
    "docparse.vectors": ("docparse.features.segmentation", "docparse.features.header",
                         "docparse.features.reference_segmenter", "docparse.features.stream"),
}
#: modules that became packages of the same name: their package ``__init__`` forwards
#: the old names (``forward_attributes``)
BECAME_PACKAGES: dict[str, tuple[str, ...]] = {
    "kafka": ("kafka.client",),
    "web.archive": ("web.archive.captures",),
    "web.html": ("web.html.metadata",),
    "match.solr": ("match.solr.client", "match.solr.index", "match.solr.admin"),
    "docparse.layout": ("docparse.layout.elements",),
    "docparse.crf": ("docparse.crf.columns",),
    "docparse.training": ("docparse.training.registry",),
}
#: old packages whose every submodule moved with them
MOVED_PACKAGES: dict[str, str] = {"models": "records"}
_PREFIX = "sandcrawler."


def new_names(old: str) -> tuple[str, ...]:
    """The modules an old dotted name's names are now in (empty: it did not move)."""
    if old.startswith(_PREFIX) and old[len(_PREFIX):] in SPLIT:
        return tuple(_PREFIX + n for n in SPLIT[old[len(_PREFIX):]])
    new = new_name(old)
    return (new,) if new else ()


def new_name(old: str) -> str | None:
    """The module an old dotted name now is, or None when it did not move (or split)."""
    if not old.startswith(_PREFIX):
        return None
    rest = old[len(_PREFIX):]
    if rest in MOVED:
        return _PREFIX + MOVED[rest]
    head, _, tail = rest.partition(".")
    if head in MOVED_PACKAGES:
        return _PREFIX + MOVED_PACKAGES[head] + ("." + tail if tail else "")
    return None


class _Forward(ModuleType):
    """A stand-in whose attributes are read from the moved module."""

    _targets: list[ModuleType]

    def __getattr__(self, name: str) -> Any:
        # dunders stay the stand-in's own: a forwarded __path__ would let the path
        # finder load the new files a second time under the old names
        if not name.startswith("__"):
            for target in self._targets:
                if hasattr(target, name):
                    return getattr(target, name)
        raise AttributeError(name)

    def __dir__(self) -> list[str]:
        return sorted({n for t in self._targets for n in dir(t)})


class _MovedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname: str, path: Any = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if not new_names(fullname):
            return None
        # an old package must stay a package, so its old submodules can be imported
        package = fullname[len(_PREFIX):] in MOVED_PACKAGES
        return importlib.util.spec_from_loader(fullname, self, is_package=package)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = new_names(spec.name)
        warnings.warn(f"{spec.name} moved to {' and '.join(new)}; the old path goes in the "
                      "next release", DeprecationWarning, stacklevel=2)
        module = _Forward(spec.name)
        module._targets = [importlib.import_module(n) for n in new]
        return module

    def exec_module(self, module: ModuleType) -> None:
        return None


def forward_attributes(package: str) -> Callable[[str], Any]:
    """A package ``__getattr__`` for a module that became a package of the same name
    (``sandcrawler.kafka`` was the module now ``sandcrawler.kafka.client``): the old
    names are looked up in its ``BECAME_PACKAGES`` modules, in order."""
    targets = [_PREFIX + t for t in BECAME_PACKAGES[package[len(_PREFIX):]]]

    def __getattr__(name: str) -> Any:
        if not name.startswith("__"):
            for target in targets:
                module = importlib.import_module(target)
                if hasattr(module, name):
                    warnings.warn(f"{package}.{name} moved to {target}; the old path goes in "
                                  "the next release", DeprecationWarning, stacklevel=2)
                    return getattr(module, name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


def install() -> None:
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedFinder())
