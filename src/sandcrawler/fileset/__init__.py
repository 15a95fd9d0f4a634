"""Dataset (fileset) ingest: platforms, archive strategies, the ingester and its workers."""
