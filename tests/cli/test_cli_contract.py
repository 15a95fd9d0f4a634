"""Every command explains itself, and docs/cli.md is its current --help."""

from __future__ import annotations

import click
import pytest

from sandcrawler.cli import main
from sandcrawler.cli.reference import _walk, render_reference
from tests.helpers.cli import invoke
from tests.helpers.paths import REPO

COMMANDS = [path for path, _ in _walk(main, [])]


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "sandcrawler")
def test_help(path: list[str]) -> None:
    result = invoke([*path, "--help"])
    assert result.exit_code == 0
    assert "Usage:" in result.stdout
    cmd: click.Command | None = main
    for name in path:
        assert isinstance(cmd, click.Group)
        cmd = cmd.get_command(click.Context(cmd), name)
    assert cmd is not None
    assert cmd.help and len(cmd.help) > 20


def test_reference_is_current() -> None:
    docs = REPO / "docs" / "cli.md"
    assert docs.read_text() == render_reference(main), (
        "docs/cli.md is stale: run `python scripts/gen_cli_reference.py`")


def test_version_and_usage_errors() -> None:
    assert invoke(["--version"]).stdout.startswith("sandcrawler, version ")
    bad = invoke(["parse-crossref-refs", "--jobs", "0"])
    assert bad.exit_code == 2 and "Invalid value for '-j' / '--jobs'" in bad.stderr
    missing = invoke(["persist", "crossref", "/nonexistent.json"])
    assert missing.exit_code == 2 and "does not exist" in missing.stderr
