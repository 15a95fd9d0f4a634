"""The command reference (docs/cli.md), generated from the commands' own --help."""

from __future__ import annotations

import click


def _walk(cmd: click.Command, path: list[str]) -> list[tuple[list[str], click.Command]]:
    found = [(path, cmd)]
    if isinstance(cmd, click.Group):
        for name in sorted(cmd.list_commands(click.Context(cmd))):
            sub = cmd.get_command(click.Context(cmd), name)
            if sub is not None and not sub.hidden:
                found.extend(_walk(sub, [*path, name]))
    return found


def render_reference(root: click.Command, prog: str = "sandcrawler") -> str:
    parts = [
        "# Command reference\n",
        "Generated from `--help` by `python scripts/gen_cli_reference.py`; "
        "a test fails when it is stale.\n",
    ]
    for path, cmd in _walk(root, [prog]):
        ctx = click.Context(cmd, info_name=" ".join(path), terminal_width=88,
                            help_option_names=["-h", "--help"])
        parts.append(f"## `{' '.join(path)}`\n\n```\n{cmd.get_help(ctx).rstrip()}\n```\n")
    return "\n".join(parts)
