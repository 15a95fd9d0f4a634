"""The header's title from its type: a translation printed below it is not part
of it, a title the header model missed is found by its type, and a word pdfalto
cut after its ligature is one word again (docparse/assembly/titles.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sandcrawler.config.sections import ExtractSettings
from sandcrawler.docparse.assembly.cascade import extract_document
from sandcrawler.docparse.assembly.titles import languages, largest_type, main_title, retitle
from sandcrawler.docparse.layout.alto import parse_alto_text
from sandcrawler.docparse.layout.elements import Token
from sandcrawler.docparse.layout.text import join_tokens
from sandcrawler.tagging.scoring import fields
from tests.helpers.skips import unavailable


def _line(text: str, n: int, *, size: float = 10.0, bold: bool = False,
          italic: bool = False, page: int = 0) -> list[Token]:
    """One printed line of words, the n-th of the page."""
    out, x = [], 72.0
    words = text.split()
    for i, word in enumerate(words):
        out.append(Token(word, "Times", size, bold, italic, x, 100.0 + 30 * n,
                         0.5 * size * len(word), size, page,
                         space_after=i < len(words) - 1))
        x += 0.5 * size * (len(word) + 1)
    return out


def _title(tokens: list[Token], labels: list[str]) -> str | None:
    return next((join_tokens(tokens[s:e]) for label, s, e in fields(labels)
                 if label == "<title>"), None)


def _labels(*counts: tuple[str, int]) -> list[str]:
    out: list[str] = []
    for label, n in counts:
        out += [f"I-{label}"] + [label] * (n - 1)
    return out


def test_languages_by_function_words() -> None:
    assert languages("Complicações maternas associadas ao tipo de parto em hospital") \
        == {"pt"}
    assert languages("Maternal complications associated with type of delivery") == {"en"}
    assert languages("Perfil de la mortalidad de hembras") == {"es", "fr"}
    assert languages("Rhodnius robustus") == frozenset()


def test_a_translation_in_another_type_below_the_title_is_left_out() -> None:
    tokens = (_line("Complicações maternas associadas ao tipo de", 0, size=22, bold=True)
              + _line("parto em hospital universitário", 1, size=22, bold=True)
              + _line("Maternal complications associated with type", 2, size=22)
              + _line("of delivery in a university hospital", 3, size=22))
    assert main_title(tokens) == \
        "Complicações maternas associadas ao tipo de parto em hospital universitário"


def test_a_smaller_italic_translation_is_left_out() -> None:
    tokens = (_line("Diabetes gestacional autorreferido - uma análise da Pesquisa", 0,
                    size=20, bold=True)
              + _line("Self-reported gestational diabetes - an analysis of the survey", 1,
                      size=14, bold=True, italic=True))
    assert main_title(tokens) == "Diabetes gestacional autorreferido - uma análise da Pesquisa"


@pytest.mark.parametrize("second", [
    # the same language in another type: a subtitle
    _line("a study of the effects on the bone", 1, size=16, italic=True),
    # a line with no function word (a species in italics)
    _line("Drosophila melanogaster larvae", 1, size=18, italic=True),
    # another language in the same type: nothing says it is a translation
    _line("Complicações maternas associadas ao tipo de parto", 1, size=18),
])
def test_a_title_is_kept_whole_without_both_signs(second: list[Token]) -> None:
    tokens = _line("Temperature and the growth of the cells in", 0, size=18) + second
    assert main_title(tokens) == join_tokens(tokens)


def test_a_title_the_model_missed_is_found_in_the_largest_type() -> None:
    lines = [_line("TransInformação Campinas v. 35 2023", 0, size=6),
             _line("A publicação científica brasileira e chinesa", 1, size=21),
             _line("indexada na Web of Science", 2, size=21),
             _line("Laura Santos Rosângela Rodrigues", 3),
             _line("Este estudo compara o perfil da publicação científica brasileira", 4),
             _line("e o da chinesa na área de Ciência da Informação indexada", 5)]
    tokens = [t for line in lines for t in line]
    labels = _labels(("<other>", 5), ("<abstract>", 11), ("<author>", 4),
                     ("<abstract>", 20))
    assert _title(tokens, labels) is None
    assert largest_type(lines) == (1, 3)
    assert _title(tokens, retitle(tokens, labels)) == \
        "A publicação científica brasileira e chinesa indexada na Web of Science"


def test_authors_in_the_largest_type_are_never_the_title() -> None:
    tokens = (_line("Mauricio Lima Barreto and Erika Aragão", 0, size=14, bold=True)
              + _line("Instituto de Saúde Coletiva Universidade Federal da Bahia", 1)
              + _line("Salvador BA Brasil and more text of the affiliation", 2))
    labels = _labels(("<author>", 6), ("<affiliation>", 9), ("<address>", 9))
    assert retitle(tokens, labels) == labels


def test_a_title_cut_short_by_the_model_gets_its_lines_in_the_same_type() -> None:
    tokens = (_line("DISCOURS ÉPILINGUISTIQUES EN", 0, size=19.92, bold=True)
              + _line("FRANCOPHONIE MANITOBAINE", 1, size=19.92, bold=True)
              + _line("Une vue d'ensemble", 2, size=18, italic=True)
              + _line("Sandrine Hallion", 3, size=12)
              + _line("Le stéréotype est de longue durée, imperméable à l'expérience", 4)
              + _line("même contredite par les faits que nous observons tous les jours", 5))
    labels = _labels(("<title>", 3), ("<author>", 2), ("<abstract>", 3), ("<author>", 2),
                     ("<abstract>", 19))
    relabelled = retitle(tokens, labels)
    assert _title(tokens, relabelled) == "DISCOURS ÉPILINGUISTIQUES EN FRANCOPHONIE MANITOBAINE"
    # what followed keeps its label, as a field of its own
    assert [label for label, *_ in fields(relabelled)] == \
        ["<title>", "<abstract>", "<author>", "<abstract>"]


def test_a_larger_rubric_above_the_title_is_left_alone() -> None:
    """The model's title outside the largest type's lines: nothing changes."""
    tokens = (_line("Kurzbeiträge / Reports", 0, size=13, bold=True)
              + _line("Wolbert Smidt", 1, size=12)
              + _line("Ein demokratischer Versuch zuviel zurück zur Diktatur", 2, size=12,
                      bold=True))
    labels = _labels(("<title>", 3), ("<author>", 2), ("<abstract>", 7))
    assert retitle(tokens, labels) == labels


def test_a_word_cut_after_its_ligature_is_one_word() -> None:
    def string(i: int, content: str, x: float, width: float) -> str:
        return (f'<String ID="w{i}" CONTENT="{content}" HPOS="{x}" VPOS="20" '
                f'WIDTH="{width}" HEIGHT="10" STYLEREFS="f0"/>')
    alto = (
        '<?xml version="1.0"?><alto xmlns="http://www.loc.gov/standards/alto/ns-v3#">'
        '<Styles><TextStyle ID="f0" FONTFAMILY="times" FONTSIZE="10"/></Styles>'
        '<Layout><Page ID="Page1" PHYSICAL_IMG_NR="1" WIDTH="600" HEIGHT="800"><PrintSpace>'
        '<TextBlock ID="b1"><TextLine>'
        + string(1, "científi", 10, 40) + "<SP/>" + string(2, "cas", 50, 15) + "<SP/>"
        + string(3, "of", 70, 10) + "<SP/>" + string(4, "staff", 84, 25) + "<SP/>"
        + string(5, "members", 112, 40)
        + '</TextLine></TextBlock></PrintSpace></Page></Layout></alto>')
    line = parse_alto_text(alto).lines()[0]
    # no gap after the ligature: one word; a space's gap: two
    assert line.text == "científicas of staff members"


def test_real_bilingual_and_missed_titles(shared_data: Path) -> None:
    """Real SciELO, Érudit and SSOAR articles (../shared/data/nonenglish,
    SOURCES.md there): the title in the article's language alone."""
    root = shared_data / "nonenglish"
    if not root.is_dir():
        unavailable(f"no non-English PDFs at {root}", "SHARED_DATA")
    for name in ("pt-rsp-38-1-18446", "es-tinf-33-e200057", "pt-csc-31-e31030043",
                 "pt-tinf-35-e227169", "fr-arbo-1001940ar"):
        truth = json.loads((root / "truth" / f"{name}.json").read_text(encoding="utf-8"))
        got = extract_document(root / "pdfs" / f"{name}.pdf", ExtractSettings()).header
        assert got is not None and got.title is not None, name
        # the title, or (fr-arbo) the title without its subtitle in another type
        ours, theirs = _words(got.title), _words(truth["title"])
        assert ours == theirs[:len(ours)] and len(ours) >= 0.5 * len(theirs), name
        for other in truth.get("other_titles", []):
            assert " ".join(_words(other)[:4]) not in " ".join(_words(got.title)), name


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.casefold())


def test_a_web_address_before_the_title_is_not_part_of_it() -> None:
    tokens = _line("www.ssoar.info Auswirkungen aktueller demographischer Veränderungen", 0)
    assert main_title(tokens) == "Auswirkungen aktueller demographischer Veränderungen"


def test_a_text_layer_without_sizes_gives_no_title_by_type() -> None:
    lines = [_line("Some words of a first line here", n, size=0.0) for n in range(4)]
    tokens = [t for line in lines for t in line]
    labels = _labels(*(("<abstract>", len(line)) for line in lines))
    assert largest_type(lines) is None
    assert retitle(tokens, labels) == labels
    assert main_title([]) == ""
