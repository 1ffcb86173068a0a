"""The alias matcher (knowprobe.answers) on hand-made cases: articles, punctuation, case, a gold
with a final period, and golds inside longer words (which the substring rule, at word boundaries,
does not take)."""

from __future__ import annotations

import pytest

from knowprobe.answers import matches_exact, matches_substring, normalize_answer


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("The Beatles", "beatles"),
        ("  the  United   States. ", "united states"),
        ("An apple a day", "apple day"),
        ("Washington, D.C.", "washington dc"),
        ('"Paris"!', "paris"),
        ("Theatre", "theatre"),  # an article only as a whole word
        ("", ""),
    ],
)
def test_normalize_answer(text, normal):
    assert normalize_answer(text) == normal


def test_normalize_answer_is_squads():
    """SQuAD's ``normalize_answer`` (lower-case, then punctuation, then the articles, then spaces),
    worked by hand: transformers 5 no longer ships ``squad_metrics`` to compare with."""
    worked = {
        "The Beatles": "beatles",
        "  the  United   States. ": "united states",
        "An apple a day": "apple day",
        "Washington, D.C.": "washington dc",
        "l'Aquila (city)": "laquila city",
        "Theatre of the Absurd": "theatre of absurd",  # "the" inside a word stays
    }
    assert {text: normalize_answer(text) for text in worked} == worked


@pytest.mark.parametrize(
    ("prediction", "gold", "aliases", "exact", "substring"),
    [
        ("Paris", "Paris", [], True, True),
        ("paris", "Paris", [], True, True),  # case
        ("the Beatles", "Beatles", [], True, True),  # an article
        ("Florence.", "Florence", [], True, True),  # punctuation
        ("NYC", "New York City", ["NYC", "Big Apple"], True, True),  # an alias
        ("Paris, France", "Paris", [], False, True),  # more than the gold: substring only
        ("Russia", "United States", ["US"], False, False),  # an alias inside a word: not at a word boundary
        ("Japanese", "Japan", [], False, False),  # the gold inside a longer word: no match
        ("the Japanese emperor", "Japan", [], False, False),
        ("Tokyo, Japan", "Japan", [], False, True),  # the gold as whole words: substring only
        ("New York City hall", "New York City", [], False, True),  # several words at word boundaries
        ("Rome", "Paris", ["Lutetia"], False, False),
        ("Apple Inc", "Apple Inc.", [], True, True),  # a gold with a final period (X-FACTR)
        ("", "Paris", [], False, False),
        ("anything", "Paris", ["The"], False, False),  # an alias that normalises to nothing matches nothing
    ],
)
def test_matchers(prediction, gold, aliases, exact, substring):
    assert matches_exact(prediction, gold, aliases) is exact
    assert matches_substring(prediction, gold, aliases) is substring
