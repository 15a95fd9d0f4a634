"""The runner: order under -j, per-record isolation, infrastructure policy, sources."""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from sandcrawler.core.errors import InfrastructureError, RecordError
from sandcrawler.pipeline import Item, Outcome, RecordWorker, Runner
from sandcrawler.pipeline.runner import process_isolated
from sandcrawler.pipeline.sinks import Rejection, StdoutSink
from sandcrawler.pipeline.sources import JsonLinesSource


class Upper(RecordWorker):
    """Echoes the line upper-cased; 'bad' is a record error, 'bug' an unexpected exception."""

    def process(self, item: Item) -> Outcome:
        text = item.data.decode()
        if text == "bad":
            raise RecordError("this one is bad", status="bad-thing")
        if text == "bug":
            raise ZeroDivisionError("oops")
        return Outcome(item.where, "success", output={"v": text.upper()})


class Flaky(Upper):
    """Raises InfrastructureError for the first ``failures`` batches (shared counter)."""

    def __init__(self, state: dict) -> None:
        self.state = state

    def process_batch(self, items: list[Item]) -> list[Outcome]:
        if self.state["failures"] > 0:
            self.state["failures"] -= 1
            raise InfrastructureError("service down")
        return super().process_batch(items)


class ListSink:
    def __init__(self, reject: str | None = None) -> None:
        self.outputs: list = []
        self.reject = reject

    def write(self, outcomes: list[Outcome]) -> list[Rejection]:
        rejected = []
        for i, o in enumerate(outcomes):
            if o.output is None:
                continue
            if o.output["v"] == self.reject:
                rejected.append((i, "db-rejected", "refused"))
            else:
                self.outputs.append(o.output["v"])
        return rejected

    def close(self) -> None:
        pass


def source(tmp_path: Path, lines: list[str], limit: int | None = None) -> JsonLinesSource:
    path = tmp_path / "in.jsonl"
    path.write_text("".join(f"{line}\n" for line in lines))
    return JsonLinesSource(path, limit=limit)


def run(src: JsonLinesSource, factory, sink, **kw) -> tuple:  # type: ignore[no-untyped-def]
    messages: list[str] = []
    summary = Runner(src, factory, sink, report=messages.append, progress=False, **kw).run()
    return summary, messages


@pytest.mark.parametrize("jobs", [1, 3])
def test_order_and_isolation(tmp_path: Path, jobs: int) -> None:
    lines = [f"r{i}" for i in range(50)]
    lines[7], lines[23] = "bad", "bug"
    sink = ListSink()
    summary, messages = run(source(tmp_path, lines), Upper, sink, jobs=jobs, batch_size=4)
    assert sink.outputs == [x.upper() for x in lines if x not in ("bad", "bug")]
    assert summary.counts == {"success": 48, "bad-thing": 1, "internal-error": 1}
    assert messages == ["line 8: bad-thing: this one is bad",
                        "line 24: internal-error: ZeroDivisionError: oops"]


def test_blank_lines_and_limit(tmp_path: Path) -> None:
    sink = ListSink()
    summary, _ = run(source(tmp_path, ["a", "", "  ", "b", "c"], limit=2), Upper, sink)
    assert sink.outputs == ["A", "B"] and summary.total == 2


def test_sink_rejections_are_counted(tmp_path: Path) -> None:
    sink = ListSink(reject="B")
    summary, messages = run(source(tmp_path, ["a", "b", "c"]), Upper, sink)
    assert sink.outputs == ["A", "C"]
    assert summary.counts == {"success": 2, "db-rejected": 1}
    assert messages == ["line 2: db-rejected: refused"]


def test_infrastructure_fail_policy(tmp_path: Path) -> None:
    sink = ListSink()
    summary, _ = run(source(tmp_path, ["a"]), partial(Flaky, {"failures": 1}), sink)
    assert summary.failure == "service down" and sink.outputs == []


def test_infrastructure_retry_policy(tmp_path: Path) -> None:
    sink = ListSink()
    summary, messages = run(source(tmp_path, ["a", "b"]), partial(Flaky, {"failures": 2}), sink,
                            on_infrastructure_error="retry", max_backoff=0.05)
    assert sink.outputs == ["A", "B"] and summary.failure is None
    # one outage of two failed attempts: one line when it begins, one when it ends
    assert messages == [
        "run: service down; retrying in 0.05s, then quietly with back-off (at most 0.05s apart) "
        "until it answers",
        "run: service reachable again after 0s (2 retries)",
    ]


def test_stop_during_backoff_drops_nothing_silently(tmp_path: Path) -> None:
    stop = threading.Event()
    threading.Timer(0.2, stop.set).start()
    sink = ListSink()
    summary, _ = run(source(tmp_path, ["a"]), partial(Flaky, {"failures": 10**6}), sink,
                     on_infrastructure_error="retry", stop=stop)
    assert summary.abandoned and summary.interrupted
    assert sink.outputs == [] and summary.total == 0


def test_fail_fast_stops_after_batch(tmp_path: Path) -> None:
    sink = ListSink()
    summary, _ = run(source(tmp_path, ["a", "bad", "c", "d"]), Upper, sink, batch_size=2,
                     fail_fast=True)
    assert sink.outputs == ["A"] and summary.total == 2


@dataclass
class Line:
    """An output that says its own JSON (work.JsonResult)."""

    value: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return self.value


def test_stdout_sink_writes_json_lines() -> None:
    buf = io.BytesIO()
    StdoutSink(buf).write([Outcome("x", "success", output=Line({"a": "é"})),
                           Outcome("y", "bad", kind="error", error="no")])
    assert buf.getvalue() == '{"a":"é"}\n'.encode()


def test_stdout_sink_escapes_file_name_bytes_and_rejects_what_json_cannot_hold() -> None:
    """A file name of bytes that are not UTF-8 (os.fsdecode keeps them as lone
    surrogates) is written escaped; an output JSON cannot hold at all fails its
    record alone (a worker once died on such a result, on every restart)."""
    import os

    buf = io.BytesIO()
    rejected = StdoutSink(buf).write([
        Outcome("line 1", "unreadable", kind="error",
                output=Line({"path": os.fsdecode(b"a\xff.pdf")})),
        Outcome("line 2", "success", output=Line({"when": object()})),
        Outcome("line 3", "success", output=Line({"path": "b.pdf"})),
    ])
    assert buf.getvalue().decode().splitlines() == ['{"path":"a\\\\xff.pdf"}', '{"path":"b.pdf"}']
    [(index, status, message)] = rejected
    assert (index, status) == (1, "internal-error") and "cannot be written: not JSON" in message


def test_summary_format(tmp_path: Path) -> None:
    summary, _ = run(source(tmp_path, ["a", "bad"]), Upper, ListSink())
    assert summary.format("job").startswith("job: 2 records in ")
    assert summary.format("job").endswith("success 1, bad-thing 1")


def test_stop_between_batches_is_an_interruption(tmp_path: Path) -> None:
    stop = threading.Event()

    class StopAfterFirst(Upper):
        def process_batch(self, items: list[Item]) -> list[Outcome]:
            stop.set()
            return super().process_batch(items)

    sink = ListSink()
    summary, _ = run(source(tmp_path, ["a", "b", "c", "d"]), StopAfterFirst, sink,
                     batch_size=2, stop=stop)
    assert sink.outputs == ["A", "B"]  # the batch in hand was finished and written
    assert summary.interrupted and not summary.abandoned


def test_an_overlong_line_is_a_record_error_not_memory(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Issue 14 B5: a line is never read whole past the size any record has."""
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'{"a": 1}\n' + b"x" * 5000 + b"\n" + b'{"b": 2}\n' + b"y" * 3000)
    source = JsonLinesSource(path, max_line=1000)
    items = [i for batch in source.batches(10) for i in batch]
    source.close()
    assert [i.where for i in items] == ["line 1", "line 2", "line 3", "line 4"]
    assert items[0].data == b'{"a": 1}' and items[2].data == b'{"b": 2}'
    for i in (items[1], items[3]):
        assert i.outcome is not None and i.outcome.status == "line-too-long" and i.data == b""
    assert "5,001 bytes" in items[1].outcome.error  # type: ignore[union-attr]
    assert source.progress_position() == path.stat().st_size


def test_outcomes_decided_by_the_source_never_reach_the_worker() -> None:
    seen: list[str] = []

    class Counting:
        def process_batch(self, items: list[Item]) -> list[Outcome]:
            seen.extend(i.where for i in items)
            return [Outcome(i.where, "success") for i in items]

        def close(self) -> None:
            pass

    decided = Outcome("b", "line-too-long", kind="error", error="big")
    got = process_isolated(Counting(), [Item("a", b"1"), Item("b", b"", outcome=decided),
                                        Item("c", b"3")])
    assert seen == ["a", "c"]
    assert [o.status for o in got] == ["success", "line-too-long", "success"]
