"""The one module of URL parts (``web.urls``): host, registered domain (the Public
Suffix List, offline), fragment, and the canonical form a crawl compares by."""

from __future__ import annotations

import pytest

from sandcrawler.fileset.platforms.base import url_host
from sandcrawler.web.http import hosts
from sandcrawler.web.http.urls import (
    absolute_url,
    canonical_url,
    host_of,
    registered_domain,
    request_url,
    without_fragment,
)


@pytest.mark.parametrize(("url", "domain"), [
    ("https://journals.plos.org/plosone/article?id=1", "plos.org"),
    # "the last two labels" would say ac.uk, go.jp, edu.au: every university one site
    ("https://www.ox.ac.uk/research", "ox.ac.uk"),
    ("https://ora.ox.ac.uk/objects/uuid:1", "ox.ac.uk"),
    ("https://www.mhlw.go.jp/english/", "mhlw.go.jp"),
    ("https://findanexpert.unimelb.edu.au/x", "unimelb.edu.au"),
    ("https://unimelb.edu.au/", "unimelb.edu.au"),
    # private suffixes: two users' sites are two sites
    ("https://alice.github.io/paper.pdf", "alice.github.io"),
    ("HTTPS://WWW.Example.ORG.:8443/a", "example.org"),
    # no public suffix, an address, a suffix itself: the host is its own domain
    ("http://localhost:8080/a", "localhost"),
    ("http://127.0.0.1:5000/a", "127.0.0.1"),
    ("http://[::1]/a", "::1"),
    ("https://ac.uk/", "ac.uk"),
    ("not a url", ""),
])
def test_registered_domain(url: str, domain: str) -> None:
    assert registered_domain(url) == domain


@pytest.mark.parametrize(("url", "host"), [
    ("https://user:pw@Example.org:8443/a?b#c", "example.org"),
    ("http://[::1]:80/", "::1"),
    ("http://[not-ipv6/", ""),  # urlsplit refuses it: no host, no traceback
    ("/relative/path", ""),
])
def test_host_of_is_one_function(url: str, host: str) -> None:
    assert host_of(url) == host
    assert hosts.host_of is host_of  # the host gate's importers get the same one
    assert url_host(url) == host  # the platforms' too


@pytest.mark.parametrize(("url", "bare"), [
    ("https://example.org/a#b", "https://example.org/a"),
    ("https://example.org/a?x=1#b#c", "https://example.org/a?x=1"),
    ("https://example.org/a", "https://example.org/a"),
])
def test_without_fragment(url: str, bare: str) -> None:
    assert without_fragment(url) == bare


def test_canonical_url_compares_what_is_the_same_resource() -> None:
    a = canonical_url("http://Example.org/a/../paper.pdf?b=2&a=1#page=3")
    b = canonical_url("http://example.org/paper.pdf?a=1&b=2")
    assert a == b == "http://example.org/paper.pdf?a=1&b=2"
    assert canonical_url("http://example.org/p%7Ex") == canonical_url("http://example.org/p~x")
    assert canonical_url("http://example.org/a") != canonical_url("http://example.org/b")


def test_a_url_w3lib_cannot_take_apart_is_its_own_canonical_form() -> None:
    # pages link to such URLs; the crawl compares them, it never stops on them
    assert canonical_url("http://a.example:99999/x#f") == "http://a.example:99999/x"
    assert canonical_url("http://[::1/x") == "http://[::1/x"
    assert canonical_url("http://a.example/\udcff") == "http://a.example/\udcff"


def test_a_byte_that_is_not_utf8_is_sent_as_that_byte() -> None:
    # a command-line argument or a file's line, decoded with surrogateescape
    assert request_url("http://a.example/\udcff") == "http://a.example/%FF"
    assert absolute_url("x\udcffy", "http://a.example/p/") == "http://a.example/p/x%FFy"
    assert request_url("http://a.example/\ud800") is None  # a surrogate that is no byte


def test_an_argument_with_a_byte_that_is_not_utf8_is_a_request_json_can_hold() -> None:
    from sandcrawler.core.jsontext import dumps_output
    from sandcrawler.ingest.requests import argument_request

    request = argument_request("http://a.example/\udcff", source="test", ingest_type="pdf")
    assert request.base_url == "http://a.example/%FF"
    assert b"%FF" in dumps_output(request.to_json())
    typed = argument_request("http://a.example/ü", source="test", ingest_type="pdf")
    assert typed.base_url == "http://a.example/ü"  # as typed, when it is UTF-8
