"""One loader and one builder signature (issue 24, item 3): every registry's entries
are absolute ``package.module:attribute`` names that ``imports.load_object``
resolves, a bad name is one ConfigError of one line, and a builder is given what
its parameters name and nothing else (``imports.call_builder``)."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import sandcrawler
from sandcrawler.app.services import PROCESSORS
from sandcrawler.app.workers import WORKERS, build_worker
from sandcrawler.citations.registry import CITATION_PARSERS
from sandcrawler.cli import COMMANDS
from sandcrawler.core.errors import ConfigError
from sandcrawler.core.imports import call_builder, load_object
from sandcrawler.storage.schemes import STORE_SCHEMES


def registry_entries() -> list[tuple[str, str]]:
    """(where, ``module:attribute``) for every entry of every registry."""
    entries = [(f"COMMANDS[{n}]", path) for n, (path, _) in COMMANDS.items()]
    entries += [(f"STORE_SCHEMES[{n}]", path) for n, path in STORE_SCHEMES.items()]
    entries += [(f"CITATION_PARSERS[{n}]", s.builder) for n, s in CITATION_PARSERS.items()]
    entries += [(f"PROCESSORS[{n}]", path) for n, path in PROCESSORS.items()]
    for name, spec in WORKERS.items():
        entries += [(f"WORKERS[{name}].{field}", path) for field, path in
                    (("build", spec.build), ("input", spec.input), ("output", spec.output),
                     ("key", spec.key)) if path is not None]
    return entries


@pytest.mark.parametrize(("where", "path"), registry_entries())
def test_every_entry_is_absolute_and_resolves(where: str, path: str) -> None:
    assert path.startswith("sandcrawler."), where
    assert load_object(path) is not None


def test_the_public_names_resolve_through_the_loader() -> None:
    for name in sandcrawler.__all__:
        if name != "__version__":
            assert getattr(sandcrawler, name) is load_object(
                f"{sandcrawler._EXPORTS.get(name, 'sandcrawler')}:{name}")


def test_a_worker_builder_is_resolved_from_its_absolute_name() -> None:
    from sandcrawler.app.settings import load_settings
    from sandcrawler.refs.parse_workers import PersistGrobidRefsWorker

    assert WORKERS["persist-grobid-refs"].build == \
        "sandcrawler.app.builders.refs:persist_grobid_refs"
    worker = build_worker("persist-grobid-refs", load_settings(), {})
    assert isinstance(worker, PersistGrobidRefsWorker)


@pytest.mark.parametrize(("path", "message"), [
    ("sandcrawler.storage.local", "cannot load 'sandcrawler.storage.local': not a name of "
     "that form (expected 'package.module:attribute')"),
    ("sandcrawler.storage.local:", "cannot load 'sandcrawler.storage.local:': not a name "
     "of that form (expected 'package.module:attribute')"),
    (".storage.local:LocalBlobStore", "cannot load '.storage.local:LocalBlobStore': not a "
     "name of that form (expected 'package.module:attribute')"),
    ("sandcrawler.storage.nowhere:Store", "cannot load 'sandcrawler.storage.nowhere:Store': "
     "no module 'sandcrawler.storage.nowhere' (expected 'package.module:attribute')"),
    ("nowhere.at.all:Store", "cannot load 'nowhere.at.all:Store': no module 'nowhere' "
     "(expected 'package.module:attribute')"),
    ("sandcrawler.storage.local:Nothing", "cannot load 'sandcrawler.storage.local:Nothing': "
     "module 'sandcrawler.storage.local' has no 'Nothing' (expected "
     "'package.module:attribute')"),
])
def test_a_bad_name_is_one_config_error(path: str, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        load_object(path)
    assert str(e.value) == message


def test_a_missing_dependency_is_named(tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A module that exists but imports a library that is not installed: the
    library is named, not the registry entry called a bad name."""
    (tmp_path / "needs_more.py").write_text("import no_such_library_xyz\nThing = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError, match="its module needs 'no_such_library_xyz', which is "
                                          "not installed"):
        load_object("needs_more:Thing")


def test_a_builder_gets_only_what_it_names() -> None:
    built: list[str] = []

    def offer(name: str) -> object:
        built.append(name)
        return name.upper()

    offers = {n: (lambda n=n: offer(n)) for n in ("citation", "grobid", "grobid_client")}

    def build(rest: str, grobid: str, optional: int = 3) -> tuple[str, str, int]:
        return rest, grobid, optional

    assert call_builder(build, offers, "x") == ("x", "GROBID", 3)
    assert built == ["grobid"]


def test_a_builder_asking_for_what_is_not_offered_is_a_config_error() -> None:
    def build(gcs: object) -> object:
        return gcs

    with pytest.raises(ConfigError) as e:
        call_builder(build, {"store": lambda: None, "s3": lambda: None})
    assert str(e.value) == (f"{__name__}:test_a_builder_asking_for_what_is_not_offered_is_a_"
                            "config_error.<locals>.build asks for 'gcs', which is not offered "
                            "to it (offered: s3, store)")


@pytest.mark.parametrize("name", sorted(CITATION_PARSERS))
def test_needs_grobid_says_what_the_builder_asks_for(name: str) -> None:
    spec = CITATION_PARSERS[name]
    parameters = set(inspect.signature(spec.load()).parameters)
    assert spec.needs_grobid == ("grobid_client" in parameters)


def test_the_parser_builders_signatures() -> None:
    """The CRF parser reads its own section only; GROBID's, its section and client."""
    assert list(inspect.signature(CITATION_PARSERS["crf"].load()).parameters) == ["citation"]
    assert list(inspect.signature(CITATION_PARSERS["grobid"].load()).parameters) == \
        ["grobid", "grobid_client"]
