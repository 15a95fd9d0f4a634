"""The loopback HTTP server base of the kit's servers: the product's own (the
offline demo serves its site with it)."""

from sandcrawler.web.http.loopback import LoopbackHTTPServer

__all__ = ["LoopbackHTTPServer"]
