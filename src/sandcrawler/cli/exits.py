"""The documented exit statuses (README, docs/cli.md)."""

#: bad configuration or input, or a record failed under --fail-fast
EXIT_FAILED = 1
#: a service (database, GROBID, Kafka, object store) failed
EXIT_INFRASTRUCTURE = 3
#: interrupted, or stopped while a batch in hand could not be stored
EXIT_INTERRUPTED = 130
