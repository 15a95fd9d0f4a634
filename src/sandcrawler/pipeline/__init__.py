"""The record pipeline: a source of items, a worker that turns each into an outcome, a sink.

    Source ──batches──▶ Worker.process_batch ──outcomes──▶ Sink.write ──▶ Source.ack

The runner owns batching, ``-j N`` worker processes (output order kept),
progress, per-status counts, per-record error isolation and what happens when
infrastructure fails (stop, or back off and retry without dropping records).
"""

from sandcrawler.core.work import Item, Outcome, RecordWorker, Worker, decode_json
from sandcrawler.pipeline.runner import Runner, RunSummary

__all__ = ["Item", "Outcome", "RecordWorker", "RunSummary", "Runner", "Worker", "decode_json"]
