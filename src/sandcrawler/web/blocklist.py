"""URLs never fetched: hosts (a listed domain and its subdomains) and patterns
(regular expressions searched in the whole URL). The lists are the settings
``crawl.blocklist_domains`` and ``crawl.blocklist_patterns``."""

from __future__ import annotations

import re
from collections.abc import Iterable

from sandcrawler.core.errors import ConfigError
from sandcrawler.web.http.hosts import host_of


def normalise_domain(domain: str) -> str:
    """``*.Example.org.`` -> ``example.org``: what a listed domain is compared as."""
    domain = domain.strip().lower().rstrip(".")
    for prefix in ("*.", "."):
        domain = domain.removeprefix(prefix)
    return domain


def compile_patterns(patterns: Iterable[str], setting: str = "crawl.blocklist_patterns"
                     ) -> list[re.Pattern[str]]:
    """The patterns compiled; ConfigError (one line, naming ``setting``) for one
    that is not a regular expression."""
    out = []
    for pattern in patterns:
        try:
            out.append(re.compile(pattern))
        except re.error as e:
            raise ConfigError(f"{setting}: {pattern!r} is not a regular expression ({e})"
                              ) from None
    return out


class UrlBlocklist:
    def __init__(self, domains: Iterable[str] = (), patterns: Iterable[str] = ()) -> None:
        self.domains = frozenset(d for d in map(normalise_domain, domains) if d)
        self.patterns = compile_patterns(patterns)

    def reason(self, url: str) -> str | None:
        """Why ``url`` is never fetched, or None when it may be."""
        host = host_of(url)
        if host:
            labels = host.split(".")
            for i in range(len(labels)):
                domain = ".".join(labels[i:])
                if domain in self.domains:
                    what = "is" if i == 0 else "is a subdomain of"
                    return f"host {host} {what} {domain} (crawl.blocklist_domains)"
        for pattern in self.patterns:
            if pattern.search(url):
                return f"the URL matches {pattern.pattern!r} (crawl.blocklist_patterns)"
        return None
