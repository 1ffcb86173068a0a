"""Facts whose answers may be several words and tokens (issue 41), and their objects' token counts.

LAMA's T-REx facts are those whose object is one token of BERT's vocabulary; X-FACTR (Jiang et
al. 2020) probes answers of several tokens. This set is built from the Wikidata stage's tables
by T-REx-train's machinery (``trex_train.build_from``) with the one-word and single-token filters
off: per LAMA T-REx relation, the (subject, object) pairs of its claims, each once, both ends
labelled, no subject of the relation's LAMA test facts, a seeded draw of at most ``per_relation``
(``multitoken_facts`` in docs/contracts.md), each end with its aliases; and per probed model the
number of tokens of each object's label (``object_tokens``).
"""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path

import pandas as pd

from ..config import schema_defaults
from ..contracts import MULTITOKEN_FACTS, OBJECT_TOKENS
from ..io import (
    INVALID_UTF8,
    MAX_TEXT_CHARACTERS,
    KnowprobeError,
    lenient,
    quoted,
    read_jsonl_lenient,
    too_long_text,
)
from ..vocab import word_initial_ids
from . import trex_train

log = logging.getLogger(__name__)

_DEFAULTS = schema_defaults("lpaqa", "multitoken")
# T-REx-train's build with its one-word filter off, LAMA's test subjects (not only its test pairs)
# left out, and the aliases kept; ``build_from`` and ``build`` pass the same
FILTERS = {"one_word": False, "test_subjects": True, "aliases": True}


def relations_of(test_facts: pd.DataFrame) -> list[str]:
    """The test set's relations in the order of their numbers (P17 before P101)."""
    return sorted(set(test_facts["relation"]), key=lambda r: int(r.lstrip("P")))


def build_from(
    claims,
    entities,
    test_facts: pd.DataFrame,
    per_relation: int = _DEFAULTS["per_relation"],
    seed: int = _DEFAULTS["seed"],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The multi-token facts (``multitoken_facts``) of the test set's relations and the drop counts
    per relation and reason, from the claims and entities datasets (``pyarrow.dataset``, streamed as
    T-REx-train's are).

    Filters as T-REx-train's, less the one-word and single-token ones: ``duplicate``,
    ``no_label``, then ``subject_in_test_set``: no fact whose subject is a subject of *the same
    relation* in the LAMA test set (``test_facts``), then ``not_sampled``. Per relation, because
    what must not overlap is the question a test fact asks (the subject in the relation's [X]
    slot): a test subject's other objects of the relation (a country's other official languages in
    P37) would be near-copies of a test fact; the same subject under another relation asks
    another question, and dropping it everywhere would thin relations whose subjects are shared
    (people in P19, P20, P27, P106). X-FACTR's released code
    (scripts/trex_multi_entity.py at c1938ec) builds its facts from T-REx's aligned triples and
    shows no exclusion of LAMA's test facts, so there is no choice of theirs to follow."""
    facts, dropped = trex_train.build_from(
        claims,
        entities,
        test_facts,
        relations_of(test_facts),
        None,  # no candidate vocabulary: the single-token filter is off
        per_relation,
        seed,
        **FILTERS,
    )
    return facts[MULTITOKEN_FACTS.columns], dropped


def build(
    claims: pd.DataFrame,
    entities: pd.DataFrame,
    test_facts: pd.DataFrame,
    per_relation: int = _DEFAULTS["per_relation"],
    seed: int = _DEFAULTS["seed"],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``build_from`` on tables in memory."""
    facts, dropped = trex_train.build(
        claims,
        entities,
        test_facts,
        relations_of(test_facts),
        None,  # no candidate vocabulary: the single-token filter is off
        per_relation,
        seed,
        **FILTERS,
    )
    return facts[MULTITOKEN_FACTS.columns], dropped


# X-FACTR's English facts (lpaqa.multitoken.source: xfactr), in its repository at the pinned commit
XFACTR_FACTS = "data/mTRExf/sub"  # one P*.jsonl a relation, LAMA's layout
XFACTR_ALIASES = "data/alias/mTRExf/en.txt"  # QID<TAB>alias<TAB>alias...
XFACTR_DROP_REASONS = {
    INVALID_UTF8: "the line is not UTF-8",
    "invalid_json": "a line that is not a JSON object",
    "missing_field": "a fact without sub_uri, sub_label, obj_uri or obj_label",
    "too_long": f"a sub_label or obj_label longer than {MAX_TEXT_CHARACTERS:,} characters (no model takes it)",
    "not_a_lama_relation": "a relation of X-FACTR that LAMA's T-REx test set lacks (no prompts ask it)",
    "duplicate": "the same (subject, object) pair again in the relation's file",
    "not_sampled": "beyond the per-relation sample size",
}
_FACT_KEYS = ("sub_uri", "sub_label", "obj_uri", "obj_label")


def read_xfactr(
    directory,
    test_facts: pd.DataFrame,
    per_relation: int = _DEFAULTS["per_relation"],
    seed: int = _DEFAULTS["seed"],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """X-FACTR's English facts (mTRExf: 46 relations of 1,000 facts at the pinned commit) as a
    ``multitoken_facts`` table, with the English aliases X-FACTR released, and the lines left out
    per relation and reason (``XFACTR_DROP_REASONS``): the facts as released, of the relations
    LAMA's T-REx test set has (those the prompt sets ask), each pair once, a seeded draw of at most
    ``per_relation`` (X-FACTR's own files hold 1,000, so the default keeps them all). LAMA's test
    subjects are not left out here: X-FACTR's release does not, and this source is for comparing
    with it. A bad line is counted and named in the log, never fatal."""
    directory = Path(directory)
    files = sorted((directory / XFACTR_FACTS).glob("P*.jsonl"), key=lambda p: int(p.stem.lstrip("P")))
    if not files:
        raise KnowprobeError(f"{directory / XFACTR_FACTS}: no P*.jsonl files (X-FACTR's mTRExf facts)")
    aliases = read_xfactr_aliases(directory / XFACTR_ALIASES)
    wanted = set(relations_of(test_facts))
    rows, drops = [], []

    def problem(record):
        if any(not isinstance(record.get(key), str) or not record[key].strip() for key in _FACT_KEYS):
            return "missing_field", "lacks one of " + ", ".join(_FACT_KEYS)
        for key in ("sub_label", "obj_label"):
            if too_long_text(record[key]):
                return "too_long", f"{key} is {len(record[key]):,} characters long: {quoted(record[key])}"
        return None

    for path in files:
        relation, counts = path.stem, Counter()
        facts = list(read_jsonl_lenient(path, problem, counts))
        if relation not in wanted:
            counts["not_a_lama_relation"] += len(facts)
            facts = []
        seen, kept = set(), []
        for _, record in facts:
            pair = (record["sub_uri"], record["obj_uri"])
            if pair in seen:
                counts["duplicate"] += 1
                continue
            seen.add(pair)
            kept.append(record)
        picked = trex_train.draw(len(kept), per_relation, seed, relation)  # T-REx-train's draw
        if picked is not None:
            counts["not_sampled"] += len(kept) - per_relation
            kept = [kept[i] for i in picked]
        rows += [
            {
                "relation": relation,
                "fact_id": record.get("uuid") or f"{relation}-{record['sub_uri']}-{record['obj_uri']}",
                "sub_uri": record["sub_uri"],
                "sub_label": record["sub_label"],
                "obj_uri": record["obj_uri"],
                "obj_label": record["obj_label"],
                "origin": "xfactr",
                "judgments_yes": 0,
                "judgments_no": 0,
                "sub_aliases": aliases.get(record["sub_uri"], []),
                "obj_aliases": aliases.get(record["obj_uri"], []),
            }
            for record in kept
        ]
        drops += [
            {"relation": relation, "reason": r, "description": XFACTR_DROP_REASONS[r], "n": n}
            for r, n in counts.items()
            if n
        ]
    facts = pd.DataFrame(rows, columns=MULTITOKEN_FACTS.columns)
    return facts, pd.DataFrame(drops, columns=["relation", "reason", "description", "n"])


def read_xfactr_aliases(path) -> dict[str, list[str]]:
    """X-FACTR's English aliases: ``QID<TAB>alias<TAB>...`` a line; a line without a QID is
    counted and named in the log (``io.lenient``), never fatal."""
    counts = Counter()

    def parse(line):
        qid, *names = line.rstrip("\n").split("\t")
        if not qid.startswith("Q"):
            return None, ("not_an_alias_line", "not QID<TAB>alias...")
        return (qid, [name for name in names if name.strip()]), None

    aliases = {qid: names for _, (qid, names) in lenient(path, parse, counts)}
    if counts:
        log.warning("%s: lines left out: %s", path, ", ".join(f"{r} {n}" for r, n in counts.items()))
    return aliases


def token_counts(tokenizer, labels: list[str]) -> list[int]:
    """The number of tokens of each label as it sits in a statement after a space ("[X] was born
    in Paris"): ``" " + label`` without special tokens, the rule knowprobe.vocab maps candidates
    by. The space selects the word-initial pieces of byte-level BPE (RoBERTa, GPT-2: ``ĠParis``)
    and SentencePiece (``▁Paris``); WordPiece (BERT) strips it, so there it is the label alone. An
    object at the very start of a template would have no space before it; LAMA's templates put
    [Y] after text."""
    unique = sorted(set(labels))
    counts = dict(zip(unique, map(len, word_initial_ids(tokenizer, unique))))
    return [counts[label] for label in labels]


def object_tokens(facts: pd.DataFrame, tokenizers: dict) -> pd.DataFrame:
    """The ``object_tokens`` table: per fact and model (``tokenizers``: model name to tokenizer),
    the token count of the object's label (``token_counts``); a long table, so that its contract
    does not change with the configured models."""
    labels = facts["obj_label"].tolist()
    frames = [
        pd.DataFrame(
            {
                "relation": facts["relation"].to_numpy(),
                "fact_id": facts["fact_id"].to_numpy(),
                "model": model,
                "obj_tokens": token_counts(tokenizer, labels),
            },
            columns=OBJECT_TOKENS.columns,
        )
        for model, tokenizer in tokenizers.items()
    ]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=OBJECT_TOKENS.columns)
