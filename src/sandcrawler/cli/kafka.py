"""``sandcrawler kafka``: the cluster's topics against the topic registry."""

from __future__ import annotations

from collections import Counter

import click

from sandcrawler.app.settings import load_settings
from sandcrawler.cli.exits import EXIT_FAILED
from sandcrawler.cli.options import echo_json
from sandcrawler.kafka.admin import TopicAdmin, TopicRow, TopicState, reconcile


@click.group()
def kafka() -> None:
    """Kafka: the topics the workers use, checked and created from their registry."""


@kafka.command("topics")
@click.option("--create", is_flag=True,
              help="Create the missing topics through the admin API. Existing topics are "
                   "never changed.")
@click.option("--include-upstream", is_flag=True,
              help="With --create, create fatcat's topics too (for dev and test clusters, "
                   "where no fatcat writes them).")
@click.option("--env", default=None, metavar="ENV", help="Deployment name in the topic names "
                                          "[default: setting env].")
@click.option("--replication-factor", type=click.IntRange(1), default=None, metavar="N",
              help="Replicas of each created topic [default: one per broker, at most 3].")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=10.0, show_default=True,
              metavar="SECONDS",
              help="Seconds each request to the cluster may take.")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object per topic instead of the table.")
def topics(create: bool, include_upstream: bool, env: str | None,
           replication_factor: int | None, timeout: float, as_json: bool) -> None:
    """List the registry's topics against the cluster; with --create, create the
    missing ones.

    One line per topic: its state, name, partitions it has / should have,
    retention, and what differs. States: ok, created, missing,
    partitions-mismatch, config-mismatch (retention or cleanup policy),
    create-failed. A topic that differs is reported, never altered: see
    docs/operations.md, "Kafka topics". fatcat's topics are checked for
    existence only.

    Exit 0 when every topic is as the registry says (after --create), 1 when one
    is missing, differs or could not be created, 3 when the cluster does not
    answer.

    \b
    Examples:
      sandcrawler kafka topics
      sandcrawler kafka topics --create --env qa --replication-factor 2
      sandcrawler kafka topics --create --include-upstream    # a dev cluster
      sandcrawler kafka topics --json | jq -r 'select(.state != "ok") | .topic'
    """
    if not create and (include_upstream or replication_factor is not None):
        raise click.UsageError("--include-upstream and --replication-factor apply only "
                               "with --create")
    settings = load_settings(env=env)
    admin = TopicAdmin(settings.kafka, timeout=timeout)
    rows = reconcile(admin, settings.env, create=create, include_upstream=include_upstream,
                     replication_factor=replication_factor)
    if as_json:
        for row in rows:
            echo_json(row.as_json())
    else:
        _table(rows)
    counts = Counter(row.state for row in rows)
    summary = ", ".join(f"{counts[state]} {state}" for state in TopicState if counts[state])
    click.echo(f"{len(rows)} topics on {admin.brokers} (env {settings.env}): {summary}",
               err=True)
    if not all(row.settled for row in rows):
        if not create and any(row.state is TopicState.MISSING for row in rows):
            click.echo("Run with --create to create the missing topics.", err=True)
        raise SystemExit(EXIT_FAILED)


def _table(rows: list[TopicRow]) -> None:
    state_w = max(len(s) for s in TopicState)
    topic_w = max(len(row.topic) for row in rows)
    click.echo(f"{'state':<{state_w}}  {'topic':<{topic_w}}  {'have/want':>10}  "
               f"{'retention':<10}  problem")
    for row in rows:
        have = "-" if row.partitions is None else str(row.partitions)
        click.echo(f"{row.state:<{state_w}}  {row.topic:<{topic_w}}  "
                   f"{have + '/' + str(row.spec.partitions):>10}  {row.spec.retention():<10}  "
                   f"{'; '.join(row.problems)}".rstrip())
