"""GROBID: our client of a GROBID server (``client``), and ``grobid-serve``, GROBID's
REST API answered by the embedded cascade (``service``; docs/grobid-service.md)."""
