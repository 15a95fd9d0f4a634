"""Real services on loopback for tests and benchmarks (PostgreSQL, Kafka mock, GROBID stand-in).

Shipped in the package so the test suite, the benchmarks and users' own
integration tests start services the same way.
"""
