"""Print the length in lines of every module docstring, and their total.

Issue 39 asks for module headers of 3-10 lines: what the module holds and
why it exists, with design discussion in docs/. This script measures them
(the source lines the module's first string spans) and exits 1 when any
module under src/sandcrawler is longer than the hard limit of 15 lines.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREES = [ROOT / "src" / "sandcrawler", ROOT / "testkit" / "src" / "sandcrawler_testkit"]
#: the hard limit the lint checks (issue 39, "Done when"); the aim is 3-10
LIMIT = 15


def docstring_lines(path: Path) -> int:
    """Source lines spanned by the module docstring of ``path``, 0 when it has none."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    first = tree.body[0] if tree.body else None
    if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str) and first.end_lineno is not None):
        return first.end_lineno - first.lineno + 1
    return 0


def measure(trees: list[Path]) -> list[tuple[Path, int]]:
    """Every ``*.py`` under ``trees`` with its docstring length, in path order."""
    return [(path, docstring_lines(path))
            for tree in trees if tree.is_dir()
            for path in sorted(tree.rglob("*.py"))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--over", type=int, default=0,
                        help="list only modules longer than this many lines")
    args = parser.parse_args(argv)
    rows = measure(TREES)
    for path, lines in sorted(rows, key=lambda row: (-row[1], str(row[0]))):
        if lines > args.over:
            print(f"{lines:4d}  {path.relative_to(ROOT)}")
    print(f"total {sum(lines for _, lines in rows)} lines in {len(rows)} modules")
    src = ROOT / "src" / "sandcrawler"
    too_long = [path for path, lines in rows if lines > LIMIT and src in path.parents]
    if too_long:
        print(f"{len(too_long)} modules over {LIMIT} lines", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
