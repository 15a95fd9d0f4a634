"""Options shared by several commands, and the glue that runs a pipeline from the CLI."""

from __future__ import annotations

import faulthandler
import signal
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click
import orjson

from sandcrawler.app.services import Services
from sandcrawler.app.settings import load_settings
from sandcrawler.app.workers import WORKERS, worker_factory
from sandcrawler.citations.registry import CITATION_PARSERS
from sandcrawler.cli.exits import EXIT_FAILED, EXIT_INFRASTRUCTURE, EXIT_INTERRUPTED

if TYPE_CHECKING:
    from sandcrawler.pipeline.observer import RunObserver
    from sandcrawler.pipeline.sinks import Sink
    from sandcrawler.pipeline.sources import Source

F = Callable[..., Any]


def open_services(**overrides: Any) -> Services:
    """This process's services for the settings (with ``overrides``: flat or dotted
    names, None for "not given"), closed when the command ends."""
    services = Services.for_process(load_settings(overrides))
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.call_on_close(services.close)
    return services


def echo_json(value: object) -> None:
    """One JSON line on stdout (commands that print records rather than run a pipeline)."""
    sys.stdout.buffer.write(orjson.dumps(value) + b"\n")


def input_argument(f: F) -> F:
    return click.argument("input_file", metavar="[FILE|-]", default="-",
                          type=click.Path(allow_dash=True, dir_okay=False, exists=True))(f)


parser_option = click.option(
    "--parser", type=click.Choice(list(CITATION_PARSERS)), default=None,
    help="Citation parser: " + "; ".join(f"{s.name}: {s.description}"
                                         for s in CITATION_PARSERS.values())
         + " [default: setting citation.parser; grobid when a GROBID URL is configured, "
           "else crf].",
)


def processing_options(f: F) -> F:
    """``--source``, ``--force``, ``--timeout``, ``--memory-limit``: how files are
    found and processed (``process`` and ``worker process-pdf``)."""
    decorators = [
        click.option("--source", metavar="DIR|URL",
                     help="Where the WARC files of captures are: a directory, or an http(s) "
                          "URL prefix answering Range requests [default: setting warc.source]."),
        click.option("--force", is_flag=True,
                     help="Process files already recorded in the PDF table."),
        click.option("--timeout", type=click.FloatRange(min=0.1), default=None,
                     help="Seconds one file may take; then its process is killed "
                          "(status timeout) [default: setting pdf.timeout, 120]."),
        click.option("--memory-limit", type=click.IntRange(min=64), default=None,
                     metavar="MIB",
                     help="Address space of the extracting process, in MiB "
                          "[default: setting pdf.memory_limit_mb, 2048]."),
    ]
    for dec in reversed(decorators):
        f = dec(f)
    return f


def batch_size_option(worker: str, what: str = "Records per batch") -> Callable[[F], F]:
    """``--batch-size``, whose default is the setting ``batch_size`` when it is set,
    else the worker's own (its registry entry)."""
    return click.option(
        "--batch-size", type=click.IntRange(1, 100_000), default=None,
        help=f"{what} [default: setting batch_size if set, else "
             f"{WORKERS[worker].batch_help()}].")


def pipeline_options(worker: str) -> Callable[[F], F]:
    """``-j``, ``--batch-size``, ``--limit``, ``--silent``/``--progress``, ``--fail-fast``."""
    return lambda f: _pipeline_options(f, worker)


def _pipeline_options(f: F, worker: str) -> F:
    decorators: list[Callable[[F], F]] = [
        click.option("-j", "--jobs", type=click.IntRange(1, 256), default=1, show_default=True,
                     help="Worker processes; output keeps input order."),
        batch_size_option(worker),
        click.option("--limit", type=click.IntRange(0), default=None,
                     help="Stop after this many records."),
        click.option("--progress/--no-progress", default=None,
                     help="Progress bar on stderr [default: when stderr is a terminal]."),
        click.option("-s", "--silent", is_flag=True,
                     help="No progress bar and no summary; per-record errors still shown."),
        click.option("--fail-fast", is_flag=True,
                     help="Stop at the first record error (exit status 1); nothing after "
                          "it is written. Batches of one record unless --batch-size is "
                          "given."),
    ]
    for dec in reversed(decorators):
        f = dec(f)
    return f


def install_stop_handlers(
    stop: threading.Event, signals: tuple[int, ...]
) -> Callable[[], None]:
    """First signal: finish the batch in hand and stop. Second: stop now.
    Returns a function that puts the previous handlers back."""

    def handler(signum: int, _frame: Any) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        click.echo(f"{signal.Signals(signum).name}: finishing the batch in hand, then stopping"
                   " (again to abort)", err=True)
        stop.set()

    previous = {sig: signal.signal(sig, handler) for sig in signals}

    def restore() -> None:
        for sig, old in previous.items():
            signal.signal(sig, old)

    return restore


def stacks_on_sigusr1() -> Callable[[], None]:
    """`kill -USR1 PID` prints every thread's stack on stderr, even while the main
    thread waits inside librdkafka or a database driver, where a stop signal's
    handler cannot run: where a worker that does not move is waiting. Returns
    what undoes it; nothing is done where stderr is not a file (in-process runs
    under a test runner)."""
    try:
        faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)
    except (AttributeError, ValueError, OSError, RuntimeError):
        return lambda: None
    return lambda: faulthandler.unregister(signal.SIGUSR1)


def run_pipeline(
    name: str,
    source: Source,
    worker: str,
    options: dict[str, Any],
    sink: Sink,
    services: Services,
    *,
    jobs: int = 1,
    batch_size: int | None = None,
    progress: bool | None = None,
    silent: bool = False,
    fail_fast: bool = False,
    endless: bool = False,
    stop: threading.Event | None = None,
    observer: RunObserver | None = None,
) -> None:
    """Run, print the summary, exit with the documented status.

    ``worker`` is a registry name, built with ``options`` in each process on that
    process's services. ``endless``: the source never runs out (a Kafka topic),
    so a stop signal is how the run ends normally (exit 0), and outages are
    waited out rather than fatal. The services are closed at the end."""
    # not paid by a command that runs no pipeline
    from sandcrawler.pipeline import Runner
    from sandcrawler.pipeline.opening import Expected

    stop = stop or threading.Event()
    restore_signals = install_stop_handlers(stop, (signal.SIGINT, signal.SIGTERM))
    restore_dumps = stacks_on_sigusr1() if endless else (lambda: None)
    settings = services.settings
    if fail_fast and batch_size is None:
        batch_size = 1  # stop at the failed record, not at the end of its batch
    # a topic is judged record by record; a file or stdin given whole can be the wrong thing
    expected = None if endless else Expected(getattr(source, "name", "the input"),
                                             WORKERS[worker].reads)
    runner = Runner(
        source,
        worker_factory(worker, settings, **options),
        sink,
        name=name,
        jobs=jobs,
        batch_size=batch_size or settings.batch_size or WORKERS[worker].default_batch(options),
        progress=False if silent else progress,
        fail_fast=fail_fast,
        on_infrastructure_error="retry" if endless else "fail",
        stop=stop,
        preload=(worker_factory.__module__,),
        observer=observer,
        expected=expected,
    )
    try:
        summary = runner.run()
    finally:
        restore_signals()
        try:
            sink.close()
            source.close()
            services.close()
        finally:
            restore_dumps()  # after the closes: where one of them waits
    if summary.wrong_input:  # one line, not a summary of unreadable records
        click.echo(f"Error: {summary.wrong_input}", err=True)
        sys.exit(EXIT_FAILED)
    if not silent:
        click.echo(summary.format(name), err=True)
    if summary.failure:
        click.echo(f"Error: {summary.failure}", err=True)
        sys.exit(EXIT_INFRASTRUCTURE)
    if fail_fast and summary.errors:
        sys.exit(EXIT_FAILED)
    if summary.abandoned or (summary.interrupted and not endless):
        sys.exit(EXIT_INTERRUPTED)
