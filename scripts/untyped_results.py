#!/usr/bin/env python3
"""The functions under src/sandcrawler whose result is untyped JSON: a return
annotation of ``dict[str, Any]`` or ``list[dict[str, Any]]`` (``| None`` too, and
module-level aliases of either). Issue 39 wants at most ``LIMIT`` of them outside
the exempt kinds in ``EXEMPT``.

    python3 scripts/untyped_results.py          # the counted ones and the total
    python3 scripts/untyped_results.py --all    # the exempt ones too, with the rule

Exits 1 when more than ``LIMIT`` are counted."""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "src" / "sandcrawler"
LIMIT = 15
#: the result shapes counted (``| None`` stripped first)
SHAPES = frozenset({"dict[str, Any]", "list[dict[str, Any]]"})


@dataclass(frozen=True)
class Rule:
    """Functions exempt from the count: ``module`` (dotted, under ``sandcrawler``)
    and ``name`` (the qualified name, ``Class.method``; nested functions as
    ``outer.<locals>.inner``) are glob patterns; ``why`` is the reason."""

    module: str
    name: str
    why: str

    def matches(self, module: str, qualname: str) -> bool:
        return fnmatchcase(module, self.module) and fnmatchcase(qualname, self.name)


#: each rule's reason is what the issue exempts: a serialiser's job is to produce
#: the JSON (or the database columns) a typed record travels as; a settings layer
#: and a client's configuration are free-form mappings by nature; a platform's or a
#: store's JSON kept exactly as it came has no shape of ours to give it
EXEMPT: tuple[Rule, ...] = (
    # -- serialisers
    *(Rule("*", pattern, "serialiser: a record's JSON or database columns")
      for pattern in ("to_*", "*.to_*", "as_*", "*.as_*", "*._json", "*.columns", "*.cells",
                      "*.cell", "*.header_json", "*.references_json", "*.to_*.<locals>.*")),
    Rule("records.*", "*._in_given_order", "serialiser: pydantic's wrap serialiser, "
         "keeping the JSON's key order"),
    Rule("records.*", "*._keys_in_order", "serialiser: pydantic's wrap serialiser, "
         "keeping the JSON's key order"),
    Rule("records.extraction", "Extraction.info", "serialiser: the extraction's info cell"),
    Rule("records.capture", "CdxRecord.to_*", "serialiser: a CDX line's JSON and DB row"),
    Rule("storage.pdftable", "PdfTable.encode_row", "serialiser: a row's cells as the "
         "pdftable_cells table's columns"),
    Rule("pdf.extractor", "extraction_cells", "serialiser: an extraction as PDF-table cells"),
    Rule("match.document", "Identification.minfo", "serialiser: the match0 minfo cell's JSON"),
    Rule("fileset.strategies", "_platform_manifest", "serialiser: the platform's manifest "
         "as the item marker stores it (compared as stored)"),
    Rule("web.file_records", "FileRecord.describe", "serialiser: where a file came from, "
         "as a result line says it"),
    Rule("web.file_records", "cdx_file_record", "serialiser: a CDX capture as the file-record "
         "JSON an item carries"),
    Rule("records.refs", "biblio_to_dict", "serialiser: GrobidBiblio.to_dict(), faster "
         "(records.refs.biblio_json types its result)"),
    # -- settings layers
    Rule("config", "*", "settings layer: sections read from a file, merged, described"),
    Rule("config.*", "*", "settings layer: sections read from a file, merged, described"),
    Rule("app.settings*", "*", "settings layer"),
    # -- client configurations
    Rule("*", "consumer_config", "client config: librdkafka's settings mapping"),
    Rule("*", "producer_config", "client config: librdkafka's settings mapping"),
    Rule("*", "*.consumer_config", "client config: librdkafka's settings mapping"),
    Rule("*", "*.producer_config", "client config: librdkafka's settings mapping"),
    Rule("kafka.client", "_quiet", "client config: librdkafka's logging settings"),
    Rule("cli.models", "_params", "client config: the CRFsuite trainer's parameters"),
    # -- JSON kept as it came
    Rule("fileset.platforms.*", "*", "raw platform answer: a repository API's JSON as it came"),
    Rule("refs.crossref_works", "unwrap_work", "as it came: a Crossref work's JSON"),
    Rule("ingest.worker", "request_of", "as it came: a request line that did not validate, "
         "echoed in its result"),
    Rule("storage.catalogue", "Catalogue.metadata", "as it came: a document's stored "
         "metadata, open to any field a user gives"),
    Rule("db.*", "normalise_row", "as it came: a row as read, before it is typed"),
    *(Rule("readers.*", pattern, "as it came: rows as SQL or PostgREST gave them, before "
           "they are typed") for pattern in ("*._get", "*._rows", "*._one")),
    Rule("refs.reading", "RefsWriter.get", "as it came: a document's stored refs_json"),
    *(Rule("match.solr.*", pattern, "as it came: Solr's JSON answer (responseHeader, "
           "response, cluster state), read where it is used")
      for pattern in ("SolrClient.request", "SolrClient.collections_api", "_json",
                      "SolrIndex._ask")),
    Rule("match.solr.index", "document", "serialiser: a work as its Solr document"),
    Rule("demo.catalog", "*", "as a platform answers: the demo's stand-in for Crossref's "
         "works JSON, indexed as Crossref's would be"),
)


@dataclass(frozen=True)
class Found:
    path: Path
    line: int
    module: str
    qualname: str
    annotation: str

    def __str__(self) -> str:
        return (f"{self.path.relative_to(REPO)}:{self.line}  {self.qualname}"
                f" -> {self.annotation}")


def _aliases(trees: dict[Path, ast.Module]) -> set[str]:
    """Module-level names bound to one of the shapes (``Row = dict[str, Any]``)."""
    names = set()
    for tree in trees.values():
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                target, value = node.target, node.value
            else:
                continue
            if isinstance(target, ast.Name) and ast.unparse(value) in SHAPES:
                names.add(target.id)
    return names


def _untyped(annotation: ast.expr, aliases: set[str]) -> bool:
    text = ast.unparse(annotation).strip("'\"")
    parts = [p.strip() for p in text.split("|") if p.strip() != "None"]
    if len(parts) != 1:
        return False
    shape = parts[0]
    for alias in aliases:  # list[Row] is list[dict[str, Any]]
        if shape == alias or shape == f"list[{alias}]":
            return True
    return shape in SHAPES


def scan(package: Path = PACKAGE) -> list[Found]:
    trees = {p: ast.parse(p.read_text(encoding="utf-8"), str(p))
             for p in sorted(package.rglob("*.py"))}
    aliases = _aliases(trees)
    found: list[Found] = []

    def visit(node: ast.AST, path: Path, module: str, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, path, module, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                if child.returns is not None and _untyped(child.returns, aliases):
                    found.append(Found(path, child.lineno, module, prefix + child.name,
                                       ast.unparse(child.returns)))
                visit(child, path, module, f"{prefix}{child.name}.<locals>.")
            else:
                visit(child, path, module, prefix)

    for path, tree in trees.items():
        parts = path.relative_to(package).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        visit(tree, path, module, "")
    return found


def exemption(found: Found) -> Rule | None:
    return next((r for r in EXEMPT if r.matches(found.module, found.qualname)), None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--all", action="store_true", help="list the exempt ones too")
    args = parser.parse_args(argv)
    results = scan()
    counted = [f for f in results if exemption(f) is None]
    if args.all:
        print(f"exempt ({len(results) - len(counted)}):")
        for f in results:
            if (rule := exemption(f)) is not None:
                print(f"  {f}  [{rule.why}]")
        print()
    print(f"counted ({len(counted)}, at most {LIMIT}):")
    for f in counted:
        print(f"  {f}")
    print(f"total: {len(counted)}")
    return 1 if len(counted) > LIMIT else 0


if __name__ == "__main__":
    sys.exit(main())
