"""Whether a predicted answer is right, against the gold label and its aliases
(docs/scoring.md, "Open decoding and generation (multi-token answers)").

Two rules, reported side by side because they differ:

* ``matches_exact``: the normalised prediction equals a normalised gold label or alias.
  ``normalize_answer`` is SQuAD's ``normalize_answer``, the one lm-evaluation-harness's
  generative QA tasks compare by (``lm_eval/tasks/coqa/utils.py`` calls
  ``transformers.data.metrics.squad_metrics.compute_exact``): lower-case, every ASCII punctuation
  character (``string.punctuation``) removed, the words "a", "an", "the" removed, whitespace
  collapsed.
* ``matches_substring``: PopQA's rule (AlexTMallen/adaptive-retrieval, ``run_model.py``: an
  answer is right when ``pa in pred or pa.lower() in pred or pa.capitalize() in pred`` for any of
  the possible answers ``pa``), here on normalised texts and at word boundaries: a normalised gold
  or alias occurs in the normalised prediction as whole words ("Japan" is not in "Japanese";
  PopQA's raw ``in`` would take it). An alias that normalises to nothing (only an article or
  punctuation) matches nothing: the empty string is in every text.

Both add X-FACTR's English rule (jzbjyb/X-FACTR, scripts/probe.py, ``match_with_gold`` with
``use_period``): a gold ending in "." also matches without it ("Inc." against "Inc"). After the
normalisation above, which removes the period anyway, it changes nothing; it is kept so that the
rule holds whatever the normalisation becomes.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable

ARTICLES = re.compile(r"\b(a|an|the)\b")
PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation (lm-evaluation-harness's exact match): lower-case, remove punctuation,
    remove the articles a / an / the, collapse whitespace; in that order, as SQuAD does it."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in PUNCTUATION)
    text = ARTICLES.sub(" ", text)
    return " ".join(text.split())


def gold_forms(gold: str, aliases: Iterable[str] | None = None) -> set[str]:
    """The normalised forms a prediction is compared with: the gold and every alias, each also
    without a final "." (X-FACTR); the empty form left out. ``aliases``: any iterable (a Parquet
    list column gives NumPy arrays, whose truth value is not defined)."""
    forms = set()
    for answer in [gold, *(aliases if aliases is not None else ())]:
        if answer is None:
            continue
        for variant in (answer, answer.rstrip()[:-1] if answer.rstrip().endswith(".") else answer):
            normal = normalize_answer(variant)
            if normal:
                forms.add(normal)
    return forms


def matches_exact(prediction: str, gold: str, aliases: Iterable[str] | None = None) -> bool:
    """Whether the normalised prediction equals the normalised gold or one of its aliases."""
    return normalize_answer(prediction) in gold_forms(gold, aliases)


def matches_substring(prediction: str, gold: str, aliases: Iterable[str] | None = None) -> bool:
    """PopQA's rule on normalised texts, at word boundaries: a normalised gold or alias occurs in
    the normalised prediction as whole words (so "Paris" is right in "Paris, France", but "Japan"
    is not inside "Japanese", nor an alias "US" inside "Russia"). The normalised texts are words
    joined by single blanks, so a whole-word occurrence is one of the blank-padded form in the
    blank-padded prediction."""
    normal = f" {normalize_answer(prediction)} "
    return any(f" {form} " in normal for form in gold_forms(gold, aliases))
