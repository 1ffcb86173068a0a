"""Prompt mining from distantly supervised sentences (LPAQA §3.1, TACL version).

Middle-word prompts: the words between the two mentions, in the order they come
(``[X] was born in [Y] .`` or ``[Y] … [X] .``). Dependency prompts: in a spaCy parse, the
shortest dependency path between the heads of the two mentions; the prompt is the span from the
leftmost to the rightmost word of that path, with each mention replaced by its placeholder
("The capital of France is Paris" gives ``capital of [X] is [Y] .``). Both come out of one
function, ``template_of``: the sentence's own characters between the span's ends, mentions
replaced, spaces as the sentence has them, and " ." at the end as LAMA's manual templates write
it (``[Y]'s [X] .``, ``long-running``), so that the same words give the same template whichever
source found them. Prompts made only of stopwords and punctuation, with more than ``max_words``
words besides the placeholders, or without exactly one ``[X]`` and one ``[Y]`` are dropped; each
(fact, sentence) counts once, and prompts are ranked by how many gave them, per relation and kind;
the T most frequent are kept. Mid and dep are counted separately (LPAQA's Table 7 compares them)
and merged by their full counts.
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

_WORD = re.compile(r"\w+(?:[-'’]\w+)*")


def template_of(text: str, start: int, end: int, sub: tuple[int, int], obj: tuple[int, int]) -> str | None:
    """The template of ``text[start:end]`` with the subject and object character spans replaced
    by ``[X]`` and ``[Y]``: whitespace collapsed, trailing sentence punctuation replaced by " ."
    (LAMA's spacing: a space before the final period only)."""
    if sub[0] < obj[1] and obj[0] < sub[1]:
        return None
    pieces, position = [], start
    for (begin, stop), slot in sorted([(sub, SUBJECT), (obj, OBJECT)]):
        pieces += [text[position:begin], slot]
        position = stop
    pieces.append(text[position:end])
    body = " ".join("".join(pieces).split())
    body = re.sub(r"\s*[.!?;:,]+$", "", body)
    return f"{body} ." if body else None


def middle_word_prompt(text: str, sub: tuple[int, int], obj: tuple[int, int]) -> str | None:
    """``[X] middle [Y] .`` (or ``[Y] middle [X] .``) from a sentence and two character spans."""
    return template_of(text, min(sub[0], obj[0]), max(sub[1], obj[1]), sub, obj)


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
    chars = lambda span: (span.start_char, span.end_char)  # noqa: E731
    return template_of(doc.text, doc[left].idx, doc[right].idx + len(doc[right]), chars(sub_span), chars(obj_span))


def shortest_path(a, b):
    """Tokens on the path between two tokens of one dependency tree, both ends included."""
    up_a = [a, *a.ancestors]
    up_b = [b, *b.ancestors]
    on_b = {t.i: n for n, t in enumerate(up_b)}
    for n, token in enumerate(up_a):
        if token.i in on_b:
            return up_a[: n + 1] + list(reversed(up_b[: on_b[token.i]]))
    return None  # different sentences of a multi-sentence parse


def prompt_filter(template: str, stopwords: frozenset[str], max_words: int = _DEFAULTS["max_words"]) -> str | None:
    """Why a mined prompt is dropped, or None when it is kept."""
    problem = template_problem(template)
    if problem:
        return "placeholders"
    words = _WORD.findall(template.replace(SUBJECT, " ").replace(OBJECT, " "))
    if len(words) > max_words:
        return "too_long"
    if all(w.lower() in stopwords for w in words):
        return "only_stopwords"
    return None


def count(candidates: pd.DataFrame) -> pd.DataFrame:
    """``relation, template, source, example`` rows → each template's ``frequency`` per relation and
    source (every row one (fact, sentence)), with one example sentence; most frequent first, ties
    broken by template."""
    counted = (
        candidates.groupby(["relation", "source", "template"], sort=True)
        .agg(frequency=("example", "size"), example=("example", "first"))
        .reset_index()
    )
    counted = counted.sort_values(
        ["relation", "source", "frequency", "template"], ascending=[True, True, False, True], kind="stable"
    )
    return counted.reset_index(drop=True)[MINED.columns]


def rank(candidates: pd.DataFrame, top: int) -> pd.DataFrame:
    """The ``top`` most frequent templates per relation and source (``count``'s order)."""
    return count(candidates).groupby(["relation", "source"], sort=False).head(top).reset_index(drop=True)


def merge(counted: pd.DataFrame, top: int) -> pd.DataFrame:
    """The ``mine`` set: mid and dep prompts together, the same template counted once (each
    source's full frequencies added, source ``dep+mid``), the ``top`` most frequent per relation."""
    merged = (
        counted.groupby(["relation", "template"], sort=True)
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
    matches: pd.DataFrame,
    top: int,
    nlp=None,
    batch_size: int = _DEFAULTS["batch_size"],
    max_words: int = _DEFAULTS["max_words"],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Candidate prompts (one row per (fact, sentence) and kind, before ranking) and the drop
    counts per relation, kind and reason (``relation, kind, reason, n``). A sentence seen again for
    the same fact (repeated text, mirrored pages) counts once (``repeated_sentence``). Without
    ``nlp`` only middle-word prompts are mined.
    """
    from spacy.lang.en.stop_words import STOP_WORDS

    stopwords = frozenset(STOP_WORDS)
    rows, dropped = [], Counter()
    repeated = matches.duplicated(["relation", "sub_uri", "obj_uri", "text"])
    for relation, n in matches.loc[repeated, "relation"].value_counts().items():
        dropped[(relation, "all", "repeated_sentence")] = int(n)
    matches = matches[~repeated].reset_index(drop=True)

    def keep(relation, template, source, example):
        reason = prompt_filter(template, stopwords, max_words) if template is not None else "no_prompt"
        if reason:
            dropped[(relation, source, reason)] += 1
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
    drops = pd.DataFrame([(*key, n) for key, n in sorted(dropped.items())], columns=["relation", "kind", "reason", "n"])
    return pd.DataFrame(rows, columns=["relation", "template", "source", "example"]), drops


def drop_totals(drops: pd.DataFrame) -> dict[str, int]:
    """``kind:reason`` → count over all relations."""
    return {f"{k}:{r}": int(n) for (k, r), n in drops.groupby(["kind", "reason"])["n"].sum().items()}


def check_matches(coverage: pd.DataFrame, facts: int) -> None:
    """A WARNING for each relation none of whose facts a sentence mentions; an error when no
    relation has a matched sentence (``coverage``: ``distant.coverage``'s table)."""
    for row in coverage[coverage["facts_with_sentence"] == 0].itertuples():
        log.warning("%s: no sentence mentions both ends of any of its %d T-REx-train facts", row.relation, row.facts)
    if int(coverage["sentences"].sum()) == 0:
        raise KnowprobeError(
            f"no Wikipedia sentence mentions both the subject and the object of any of the {facts} "
            "T-REx-train facts: is the Wikipedia dump the right one, and are the entities' labels English?"
        )


def check_mined(mined: pd.DataFrame, matches: pd.DataFrame, drops: pd.DataFrame) -> None:
    """A WARNING for each relation with matched sentences but no mined prompt, with the drop
    counts by reason; an error when no relation has one."""
    for relation in sorted(set(matches["relation"]) - set(mined["relation"])):
        reasons = drops[drops["relation"] == relation]
        log.warning(
            "%s: no mined prompt from its %d matched sentences (dropped: %s)",
            relation,
            int((matches["relation"] == relation).sum()),
            ", ".join(f"{k}:{r} {n}" for k, r, n in zip(reasons["kind"], reasons["reason"], reasons["n"])),
        )
    if mined.empty:
        raise KnowprobeError(
            f"no prompt mined from {len(matches)} matched sentences (dropped: {drop_totals(drops)}); "
            "see mining.max_words and the sentences in results/lpaqa/mining/matches.parquet"
        )
