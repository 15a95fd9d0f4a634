"""Which title words a query asks the index, and in what steps (``match/index.py``
``choose_words`` and ``WordChoice.search``), on both engines of the match index.

A query asks its rarest known words while the works holding them stay within a
budget of postings. A title of common words goes over it: ranking every work
that holds any one of them is the cost at 10^6 works, so the works holding two
of them are asked first, and the rarest words' works fill up what is left.
"""

from __future__ import annotations

from typing import Any

from sandcrawler.match.index import MIN_WORDS, POSTINGS_BUDGET, WordChoice, choose_words
from tests.helpers.match_engines import Catalogs
from tests.helpers.match_engines import catalogs as catalogs
from tests.helpers.match_engines import match_engine as match_engine

Work = dict[str, Any]


def work(doi: str, title: str) -> Work:
    return {"DOI": doi, "type": "journal-article", "title": [title],
            "author": [{"given": "A.", "family": "Nobody", "sequence": "first"}],
            "issued": {"date-parts": [[2001]]}, "container-title": ["Journal of Examples"]}


def test_words_within_the_budget_are_asked_together() -> None:
    df = {"glacier": 3, "andes": 5, "retreat": 40, "southern": 380, "the": 900}
    plan = choose_words(["the", "southern", "andes", "glacier", "retreat", "nowhere"], df)
    # rarest first; "southern" would go over the budget once three are chosen;
    # a word no work has is never asked
    assert plan == WordChoice((), (), ("glacier", "andes", "retreat"))


def test_a_title_of_common_words_asks_for_two_of_them_then_its_rarest() -> None:
    df = {"billiards": 150, "review": POSTINGS_BUDGET, "physical": 2 * POSTINGS_BUDGET}
    plan = choose_words(["physical", "review", "billiards"], df)
    assert MIN_WORDS == 3 and sum(df.values()) > POSTINGS_BUDGET
    assert plan == WordChoice((), ("billiards", "review", "physical"), ("billiards",))
    # only common words: all of the rarest four first
    common = {w: 5 * POSTINGS_BUDGET + i for i, w in enumerate(["a1", "b2", "c3", "d4", "e5"])}
    plan = choose_words(list(common), common)
    assert plan.all_of == ("a1", "b2", "c3", "d4") and plan.two_of == ("a1", "b2", "c3")
    # the rarest word is asked alone even over the budget: it is all there is
    assert plan.any_of == ("a1",)


def test_one_known_word_is_asked_whatever_its_count() -> None:
    assert choose_words(["review", "xyzzy"], {"review": 10 * POSTINGS_BUDGET}) == \
        WordChoice((), (), ("review",))


#: more works holding "physical", and more holding "review", than the budget
BACKGROUND = [work(f"10.5555/bg.{i}", f"Physical {kind} number{i}")
              for i, kind in enumerate(["models"] * 420 + ["review"] * 5)] + \
             [work(f"10.5555/rv.{i}", f"Review of case{i}") for i in range(420)]


def test_the_works_holding_two_of_the_words_come_first(catalogs: Catalogs) -> None:
    index = catalogs.index([*BACKGROUND,
                            work("10.5555/target", "Quantum billiards: a physical review"),
                            work("10.5555/rare", "Stadium billiards")])
    found = [r.doi for r in index.by_words(["physical", "review", "billiards"], 10)]
    # the target holds all three, then the five holding two; the works holding
    # "billiards" alone fill up: "physical" or "review" alone is never asked
    assert found[0] == "10.5555/target"
    assert set(found[1:6]) == {f"10.5555/bg.{i}" for i in range(420, 425)}
    assert found[6:] == ["10.5555/rare"]


def test_no_work_holding_two_of_the_words_leaves_the_rarest(catalogs: Catalogs) -> None:
    index = catalogs.index([*BACKGROUND[:420], *BACKGROUND[425:],
                            work("10.5555/rare", "Stadium billiards")])
    assert [r.doi for r in index.by_words(["physical", "review", "billiards"], 10)] == \
        ["10.5555/rare"]
