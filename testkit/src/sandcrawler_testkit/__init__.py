"""Real services on loopback for sandcrawler's tests and benchmarks (PostgreSQL,
an S3 server, a Kafka broker, PostgREST, a GROBID stand-in, a file server, the
dataset platforms), and writers of test PDFs and WARCs.

A package of its own (``sandcrawler-testkit``), installed beside sandcrawler by
the test set-up; the product never imports it.
"""
