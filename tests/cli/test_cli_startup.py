"""Start-up: a command imports only what it needs (issue 23, item 3).

The figures are in bench/perf/startup.py; these tests pin what is imported, which is
what the time follows."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from sandcrawler.cli import COMMANDS, main

#: what no listing of commands and no one-string parse may import
HEAVY = ("sqlalchemy", "alembic", "psycopg", "boto3", "botocore", "urllib3",
         "confluent_kafka", "uvicorn", "starlette", "trafilatura", "ftfy", "tqdm",
         "sandcrawler.pipeline.runner", "sandcrawler.db",
         "sandcrawler.storage", "sandcrawler.web", "sandcrawler.ingest")


def imported(args: list[str]) -> set[str]:
    """The modules a real ``sandcrawler ARGS`` process had imported when it ended."""
    code = ("import sys\nfrom sandcrawler.cli import main\n"
            "try:\n    main(sys.argv[1:], prog_name='sandcrawler')\n"
            "finally:\n    print('\\n'.join(sys.modules), file=sys.stderr)\n")
    result = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    return set(result.stderr.decode().split())


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_help_imports_no_command() -> None:
    modules = imported(["--help"])
    assert heavy(modules) == []
    assert not [m for m in modules if m.startswith("sandcrawler.cli.") and m not in
                ("sandcrawler.cli.exits",)]
    assert "pydantic" not in modules


def test_one_string_parse_imports_no_service() -> None:
    modules = imported(["citations", "parse", "Smith J. A title. Nature. 2001;1:2-3."])
    assert "sandcrawler.citations.crf.parser" in modules  # it did parse
    assert heavy(modules) == []


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_summary_is_the_commands_own(name: str) -> None:
    """`sandcrawler --help` lists each command by the summary in COMMANDS, without
    importing it: the summary must be the first sentence of the command's help."""
    command = main.get_command(click.Context(main), name)
    assert command is not None and command.help
    summary = COMMANDS[name][1]
    assert " ".join(command.help.split()).startswith(summary)
    assert summary.endswith(".") and ". " not in summary


def test_listing_is_what_click_would_print() -> None:
    """The listing from COMMANDS equals click's own from the loaded commands."""
    loaded = dict(main.commands)
    main.commands.clear()
    try:
        lazy = CliRunner().invoke(main, ["--help"], terminal_width=80).stdout
    finally:
        main.commands.update(loaded)
    group = click.Group(commands={n: main.get_command(click.Context(main), n)
                                  for n in COMMANDS})
    ctx = click.Context(group, info_name="sandcrawler", terminal_width=80)
    formatter = ctx.make_formatter()
    group.format_commands(ctx, formatter)
    assert "Commands:" in formatter.getvalue()
    assert formatter.getvalue() in lazy
