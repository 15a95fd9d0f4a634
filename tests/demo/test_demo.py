"""The offline demo's material (``sandcrawler.demo``, rendered by
``scripts/make_demo.py``) and ``sandcrawler ingest demo`` run from the package
alone: the generator reproduces the committed files, every landing page leads the
crawler's rules to its full text, every full text describes the article its
landing page describes, and the command ingests them into its own directory."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import orjson
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
from selectolax.lexbor import LexborHTMLParser

from sandcrawler.app.demo import default_demo_dir
from sandcrawler.app.settings import load_settings
from sandcrawler.demo import EXPECTED, REQUESTS, SITE, DemoPage, DemoSite, site_pages
from sandcrawler.web.html.landing import parse_html
from tests.helpers.cli import run_cli
from tests.helpers.paths import REPO
from tests.test_packaging import build_wheel

ARTICLES = json.loads((SITE.parent / "articles.json").read_text(encoding="utf-8"))["articles"]
PAGES = {p.url: p for p in site_pages()}
#: the rule that finds each article's full text on its landing page first, and the
#: platform's own rule that finds it too (the page's links, not only its meta tags)
RULES = {"plos": ("citation_pdf_url", "platform:plos"),
         "peerj": ("citation_pdf_url", "platform:peerj"),
         "elife": ("platform:elife", "platform:elife"),
         "firstmonday": ("citation_fulltext_html_url", "platform:ojs"),
         "scielo": ("platform:scielo", "platform:scielo")}
#: the meta tags that name a full text
FULLTEXT_META = re.compile(rb'<meta name="citation_(pdf|fulltext_html)_url"[^>]*>')


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _landing(article: dict[str, Any], without_meta: bool = False) -> Any:
    page = PAGES[article["urls"]["landing"]]
    assert page.file is not None
    body = (SITE / page.file).read_bytes()
    if without_meta:
        body = FULLTEXT_META.sub(b"", body)
    return parse_html(body, page.url, page.content_type)


def _body(url: str) -> bytes:
    page = PAGES[url]
    assert page.file is not None
    return (SITE / page.file).read_bytes()


def pdf_title(data: bytes) -> tuple[str, str]:
    """The text set in the largest type on page 1 (the title), and the PDF's
    information dictionary /Title."""
    pdf = pdfium.PdfDocument(data)
    try:
        text = pdf[0].get_textpage()
        sizes = [pdfium_c.FPDFText_GetFontSize(text.raw, i) for i in range(text.count_chars())]
        largest = max(sizes)
        title = [i for i, s in enumerate(sizes) if s == largest]
        # its lines' ends are characters PDFium adds (of no size): spaces
        chars = "".join(text.get_text_range(i, 1) if sizes[i] == largest else " "
                        for i in range(title[0], title[-1] + 1))
        return _norm(chars), pdf.get_metadata_dict()["Title"]
    finally:
        pdf.close()


# --- the material ---------------------------------------------------------------------------


def test_the_generator_reproduces_the_committed_files(tmp_path: Path) -> None:
    out = tmp_path / "site"
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "make_demo.py"),
                           "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    made = {p.name: p.read_bytes() for p in out.iterdir()}
    committed = {p.name: p.read_bytes() for p in SITE.iterdir()}
    assert sorted(made) == sorted(committed)
    for name, data in made.items():
        assert data == committed[name], f"{name} differs: run scripts/make_demo.py"
    # small enough to ship: tens of KB each
    assert max(len(d) for d in committed.values()) < 64 * 1024


def test_every_page_is_served_and_every_request_starts_at_one() -> None:
    with DemoSite() as site:
        assert site.routes() == {o: site.url for o in site.origins}
        for page in site_pages():
            if page.file is not None:
                assert site.content(page.url) == (SITE / page.file).read_bytes()
    urls = {p.url for p in site_pages()}
    assert {r.base_url for r in REQUESTS} <= urls
    assert len(EXPECTED) == len(REQUESTS)


def test_demo_site_serves_other_files_too(tmp_path: Path) -> None:
    (tmp_path / "a.html").write_text("<p>hello</p>")
    pages = (DemoPage("https://example.org/a", "a.html"),)
    with DemoSite(tmp_path, pages) as site:
        assert site.content("https://example.org/a") == b"<p>hello</p>"
    with pytest.raises(FileNotFoundError, match="not in"):
        DemoSite(tmp_path / "nothing", pages)
    with pytest.raises(ValueError):
        DemoSite(tmp_path)


@pytest.mark.parametrize("article", ARTICLES, ids=[a["key"] for a in ARTICLES])
def test_each_landing_page_leads_the_crawler_to_its_full_text(article: dict[str, Any]) -> None:
    page = _landing(article)
    kind = next(k for k in ("pdf", "xml", "html") if k in article["urls"])
    links = page.fulltext_links(kind)
    assert links, f"no {kind} link on {article['urls']['landing']}"
    first, platform = RULES[article["key"]]
    assert (links[0].url, links[0].rule) == (article["urls"][kind], first)
    # the platform's rule finds it on the page's links alone (OJS's rule takes a
    # galley's view page to its download address)
    links = _landing(article, without_meta=True).fulltext_links(kind)
    want = article["urls"][kind]
    if platform == "platform:ojs":
        want = want.replace("/article/view/", "/article/download/")
    assert (links[0].url, links[0].rule) == (want, platform)
    assert page.biblio.doi == article["doi"]
    if article["key"] == "firstmonday":  # no PDF galley: the demo's honest miss
        assert page.fulltext_links("pdf") == []


@pytest.mark.parametrize("article", ARTICLES, ids=[a["key"] for a in ARTICLES])
def test_each_full_text_is_the_article_its_landing_page_describes(
        article: dict[str, Any]) -> None:
    landing = _landing(article).biblio
    assert landing is not None
    assert landing.title == article["title"]
    if "pdf" in article["urls"]:
        data = _body(article["urls"]["pdf"])
        assert data.startswith(b"%PDF-")
        page_one, info_title = pdf_title(data)
        assert page_one == info_title == landing.title
        pdf = pdfium.PdfDocument(data)
        assert len(pdf) >= 2
        text = _norm("".join(p.get_textpage().get_text_range() for p in pdf))
        pdf.close()
        assert article["doi"] in text and "demonstration rendering" in text
        assert "References" in text
    if "html" in article["urls"]:
        tree = LexborHTMLParser(_body(article["urls"]["html"]).decode())
        assert _norm(tree.css_first("title").text()) == landing.title
        assert _norm(tree.css_first("h1").text()) == landing.title
        assert article["doi"] in tree.text() and "demonstration rendering" in tree.text()
    if "xml" in article["urls"]:
        root = ET.fromstring(_body(article["urls"]["xml"]))
        titles = [t.text for t in root.iter("article-title")
                  if t.get("{http://www.w3.org/XML/1998/namespace}lang")]
        assert titles[0] == landing.title
        assert root.find(".//article-id[@pub-id-type='doi']").text == article["doi"]


@pytest.mark.slow
def test_the_wheel_ships_the_demo(tmp_path: Path) -> None:
    """``pip install`` users have the demo: every file of it is package data."""
    names = build_wheel(REPO, ["pyproject.toml", "README.md", "src"], tmp_path)
    demo = SITE.parent
    shipped = {f"sandcrawler/demo/{p.relative_to(demo).as_posix()}"
               for p in demo.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert "sandcrawler/demo/site/plos.pdf" in shipped
    assert "sandcrawler/demo/SOURCES.md" in shipped
    assert shipped <= set(names)


# --- the command ----------------------------------------------------------------------------


@pytest.mark.slow
def test_ingest_demo_from_the_package_into_its_own_directory(tmp_path: Path) -> None:
    """``sandcrawler ingest demo`` as a user runs it: nothing configured but a data
    directory, no ../shared; it writes beside that directory, never in it."""
    data_dir = tmp_path / "data"
    demo_dir = default_demo_dir(data_dir)
    assert demo_dir == tmp_path / "data-demo"
    # the main job as shipped: the extraction cascade on (the suite turns it off)
    first = run_cli(["ingest", "demo"], timeout=300, env={"SANDCRAWLER_EXTRACT_ENABLED": "1"})
    stderr = first.stderr.decode()
    assert first.returncode == 0, stderr
    assert "Traceback" not in stderr
    pdfs = sum(1 for line in first.stdout.splitlines()
               if orjson.loads(line)["request"]["ingest_type"] == "pdf"
               and orjson.loads(line)["hit"])
    assert stderr.count("  extracted  success: ") == pdfs > 0
    assert not data_dir.exists()  # the user's data directory is untouched
    assert f"own data directory {demo_dir}" in stderr
    assert f"SANDCRAWLER_DATA_DIR={demo_dir} sandcrawler serve" in stderr
    results = [orjson.loads(line) for line in first.stdout.splitlines()]
    assert [r["status"] for r in results] == list(EXPECTED)
    by_doi = {a["doi"]: a for a in ARTICLES}
    for result in results:
        if not result["hit"]:
            continue
        landing = result["html_biblio"]["title"]
        article = by_doi[result["request"]["ext_ids"]["doi"]]
        assert landing == article["title"]
        uuid = result["processing"]["uuid"]
        got = run_cli(["catalogue", "get", uuid],
                      env={"SANDCRAWLER_DATA_DIR": str(demo_dir)})
        assert got.returncode == 0, got.stderr.decode()
        entry = orjson.loads(got.stdout)
        assert entry["metadata"]["title"][0] == landing
        if result["request"]["ingest_type"] == "pdf":
            served = hashlib.sha1(_body(article["urls"]["pdf"])).hexdigest()
            assert result["file_meta"]["sha1hex"] == served
            assert entry["sha1"] == served
            stored = demo_dir / "store" / entry["paths"]["pdf"]
            assert hashlib.sha1(stored.read_bytes()).hexdigest() == served
    # a rerun: everything is there, nothing fetched, and it says so
    again = run_cli(["ingest", "demo"], timeout=300)
    stderr = again.stderr.decode()
    assert again.returncode == 0, stderr
    assert "success-existing     5" in stderr and "nothing fetched again" in stderr
    # --dir puts it elsewhere
    other = tmp_path / "elsewhere"
    third = run_cli(["ingest", "demo", "--dir", str(other)], timeout=300)
    assert third.returncode == 0 and (other / "sandcrawler.sqlite3").is_file()
    assert "success              5" in third.stderr.decode()
    assert load_settings().data_dir == data_dir

