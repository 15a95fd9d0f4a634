"""Web archive formats and clients: CDX index lines (more to come with ingest)."""
