"""The size of each dataset platform's module, and of its registry entry.

Issue 27 asks that a new platform be one module (aim: 150 lines or fewer) plus
one registry line. For every module of ``src/sandcrawler/fileset/platforms/``
(base.py and the registry excluded) this prints:

  lines       the file's lines (``wc -l``);
  code        lines that are neither blank, nor comments, nor docstrings (the
              documented behaviour each module carries in its docstring is the
              rest);
  registry    lines of ``platforms/__init__.py`` that name the platform's helper
              or settings class (its import and its one field of
              ``PlatformSettings``; a field wrapped over two lines counts two).

Run:  python bench/eval/platform_sizes.py
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

from sandcrawler.fileset.platforms import PLATFORMS

PLATFORMS_DIR = Path(__file__).resolve().parents[2] / "src/sandcrawler/fileset/platforms"
AIM = 150


def code_lines(source: str) -> int:
    """Lines holding code: not blank, not only a comment, not in a docstring."""
    tree = ast.parse(source)
    docstrings: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                first = body[0]
                docstrings.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                          tokenize.DEDENT, tokenize.ENDMARKER):
            continue
        lines.update(range(token.start[0], token.end[0] + 1))
    return len(lines - docstrings)


def main() -> None:
    registry = (PLATFORMS_DIR / "__init__.py").read_text().splitlines()
    print(f"{'platform':12} {'module':16} {'lines':>6} {'code':>6} {'registry':>9}  aim <= {AIM}")
    for name, entry in PLATFORMS.items():
        module = Path(entry.helper.__module__.replace(".", "/") + ".py").name
        source = (PLATFORMS_DIR / module).read_text()
        names = (entry.helper.__name__, entry.settings.__name__)
        reg = sum(1 for line in registry if any(n in line for n in names))
        total = len(source.splitlines())
        mark = "" if total <= AIM else "  over"
        print(f"{name:12} {module:16} {total:6} {code_lines(source):6} {reg:9}{mark}")


if __name__ == "__main__":
    main()
