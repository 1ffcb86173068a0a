"""Prompt mining from distantly supervised sentences (LPAQA §3.1, TACL version).

Middle-word prompts: the words between the two mentions, in the order they come
(``[X] was born in [Y] .`` or ``[Y] … [X] .``). Dependency prompts: in a spaCy parse, the
shortest dependency path between the heads of the two mentions; the prompt is the span from the
leftmost to the rightmost word of that path, with each mention replaced by its placeholder
("The capital of France is Paris" gives ``capital of [X] is [Y]``). Prompts made only of stopwords
and punctuation, longer than 10 words, or without exactly one ``[X]`` and one ``[Y]`` are dropped;
the rest are ranked by how many sentences gave them, per relation and kind, and the T most
frequent are kept. Mid and dep are counted separately (LPAQA's Table 7 compares them) and merged.
"""

from __future__ import annotations

import logging
import re
from collections import Counter

import pandas as pd

from ..config import schema_defaults
from ..contracts import MINED
from ..io import KnowprobeError
from ..prompts import OBJECT, SUBJECT, prompt_table, template_problem

log = logging.getLogger(__name__)

_DEFAULTS = schema_defaults("lpaqa", "mining")

MAX_WORDS = 10
_TOKEN = re.compile(r"\w+(?:[-'’]\w+)*|[^\w\s]")


def _words(text: str) -> str:
    return " ".join(_TOKEN.findall(text))


def middle_word_prompt(text: str, sub: tuple[int, int], obj: tuple[int, int]) -> str | None:
    """``[X] middle [Y] .`` (or ``[Y] middle [X] .``) from a sentence and two character spans."""
    if sub[0] < obj[1] and obj[0] < sub[1]:
        return None
    first, second = (SUBJECT, OBJECT) if sub[0] < obj[0] else (OBJECT, SUBJECT)
    middle = _words(text[min(sub[1], obj[1]) : max(sub[0], obj[0])])
    return f"{first} {middle} {second} ." if middle else f"{first} {second} ."


def dependency_prompt(doc, sub: tuple[int, int], obj: tuple[int, int]) -> str | None:
    """The dependency-path prompt of two token spans ``[start, end)`` of a parsed spaCy ``Doc``."""
    sub_span, obj_span = doc[sub[0] : sub[1]], doc[obj[0] : obj[1]]
    if len(sub_span) == 0 or len(obj_span) == 0 or (sub[0] < obj[1] and obj[0] < sub[1]):
        return None
    path = shortest_path(sub_span.root, obj_span.root)
    if path is None:
        return None
    left, right = min(t.i for t in path), max(t.i for t in path)
    # a mention cut by the span's edge is taken whole
    for start, end in (sub, obj):
        if start <= right and end > left:
            left, right = min(left, start), max(right, end - 1)
    words, placed = [], set()
    for i in range(left, right + 1):
        if sub[0] <= i < sub[1]:
            if SUBJECT not in placed:
                words.append(SUBJECT)
                placed.add(SUBJECT)
        elif obj[0] <= i < obj[1]:
            if OBJECT not in placed:
                words.append(OBJECT)
                placed.add(OBJECT)
        else:
            words.append(doc[i].text)
    return " ".join(words)


def shortest_path(a, b):
    """Tokens on the path between two tokens of one dependency tree, both ends included."""
    up_a = [a, *a.ancestors]
    up_b = [b, *b.ancestors]
    on_b = {t.i: n for n, t in enumerate(up_b)}
    for n, token in enumerate(up_a):
        if token.i in on_b:
            return up_a[: n + 1] + list(reversed(up_b[: on_b[token.i]]))
    return None  # different sentences of a multi-sentence parse


def prompt_filter(template: str, stopwords: frozenset[str]) -> str | None:
    """Why a mined prompt is dropped, or None when it is kept."""
    problem = template_problem(template)
    if problem:
        return "placeholders"
    words = [w for w in template.split() if w not in (SUBJECT, OBJECT)]
    if len(words) > MAX_WORDS:
        return "too_long"
    if all(w.lower() in stopwords or not any(c.isalnum() for c in w) for w in words):
        return "only_stopwords"
    return None


def rank(candidates: pd.DataFrame, top: int) -> pd.DataFrame:
    """``relation, template, source`` rows (one per sentence) → the ``top`` most frequent per relation
    and source, with ``frequency`` and one example sentence; ties broken by template."""
    counted = (
        candidates.groupby(["relation", "source", "template"], sort=True)
        .agg(frequency=("example", "size"), example=("example", "first"))
        .reset_index()
    )
    counted = counted.sort_values(
        ["relation", "source", "frequency", "template"], ascending=[True, True, False, True], kind="stable"
    )
    return counted.groupby(["relation", "source"], sort=False).head(top).reset_index(drop=True)[MINED.columns]


def merge(ranked: pd.DataFrame, top: int) -> pd.DataFrame:
    """The ``mine`` set: mid and dep prompts together, the same template counted once (frequencies
    added, source ``mid+dep``), the ``top`` most frequent per relation."""
    merged = (
        ranked.groupby(["relation", "template"], sort=True)
        .agg(
            frequency=("frequency", "sum"),
            source=("source", lambda s: "+".join(sorted(set(s)))),
            example=("example", "first"),
        )
        .reset_index()
    )
    merged = merged.sort_values(["relation", "frequency", "template"], ascending=[True, False, True], kind="stable")
    return merged.groupby("relation", sort=False).head(top).reset_index(drop=True)[MINED.columns]


def as_prompt_set(mined: pd.DataFrame) -> pd.DataFrame:
    """Mined prompts in the prompt-set layout the probe reads (rank 0 = most frequent)."""
    rows = []
    for relation, group in mined.groupby("relation", sort=True):
        for rank_, row in enumerate(group.itertuples()):
            rows.append(
                {
                    "relation": relation,
                    "template": row.template,
                    "source": row.source,
                    "rank": rank_,
                    "score": float(row.frequency),
                }
            )
    return prompt_table(rows)


def load_spacy(model: str):
    import spacy

    try:
        return spacy.load(model, exclude=["ner", "lemmatizer", "textcat"])
    except OSError:
        raise KnowprobeError(
            f"mining.spacy_model: spaCy pipeline {model!r} is not installed; "
            f"install it with: python -m spacy download {model}"
        ) from None


def mine(
    matches: pd.DataFrame, top: int, nlp=None, batch_size: int = _DEFAULTS["batch_size"]
) -> tuple[pd.DataFrame, Counter]:
    """Candidate prompts (one row per match and kind, before ranking) and the drop counts.

    Without ``nlp`` only middle-word prompts are mined.
    """
    from spacy.lang.en.stop_words import STOP_WORDS

    stopwords = frozenset(STOP_WORDS)
    rows, dropped = [], Counter()

    def keep(relation, template, source, example):
        reason = prompt_filter(template, stopwords) if template is not None else "no_prompt"
        if reason:
            dropped[f"{source}:{reason}"] += 1
        else:
            rows.append((relation, template, source, example))

    for m in matches.itertuples():
        keep(m.relation, middle_word_prompt(m.text, (m.sub_start, m.sub_end), (m.obj_start, m.obj_end)), "mid", m.text)
    if nlp is not None:
        docs = nlp.pipe(matches["text"], batch_size=batch_size)
        for m, doc in zip(matches.itertuples(), docs):
            sub = doc.char_span(m.sub_start, m.sub_end, alignment_mode="expand")
            obj = doc.char_span(m.obj_start, m.obj_end, alignment_mode="expand")
            template = None
            if sub is not None and obj is not None:
                template = dependency_prompt(doc, (sub.start, sub.end), (obj.start, obj.end))
            keep(m.relation, template, "dep", m.text)
    return pd.DataFrame(rows, columns=["relation", "template", "source", "example"]), dropped
