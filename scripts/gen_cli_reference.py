"""Regenerate docs/cli.md from the CLI's --help texts."""

from pathlib import Path

from sandcrawler.cli import main
from sandcrawler.cli.reference import render_reference

out = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
out.write_text(render_reference(main))
print(f"wrote {out}")
