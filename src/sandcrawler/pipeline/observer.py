"""What a run reports as it goes, for whoever watches it (a worker's metrics).

The runner calls a ``RunObserver`` only when it was given one, so batch commands
pay nothing; it knows nothing of how the observations are kept or exposed
(``sandcrawler.pipeline.metrics`` keeps them as Prometheus metrics).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol


class RunObserver(Protocol):
    """Called from the runner's thread and from its sink writer thread: an
    implementation must be thread-safe."""

    def records_in(self, count: int) -> None:
        """``count`` records were read from the source (one batch)."""
        ...

    def batch_done(self, statuses: Mapping[str, int], seconds: float) -> None:
        """A batch is durable and acked: its records by final status, and the seconds
        from its reading to its acknowledgement (processing, writing, waiting between)."""
        ...

    def retrying(self, service: str, delay: float) -> None:
        """``service`` failed (``InfrastructureError.service``); the next attempt is
        in ``delay`` seconds. Called once per retry."""
        ...

    def recovered(self) -> None:
        """No retry is waiting any more: everything that failed has answered again
        (or the run stopped)."""
        ...
