"""File ingest: an ingest request's ``base_url`` crawled to its full text, every
hop archived, the full text processed, stored and catalogued."""
