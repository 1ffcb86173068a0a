"""T-REx-train as LPAQA built it, its train and dev splits, and the statistics of LPAQA's Table 1.

Per LAMA T-REx relation (and per relation Google-RE's are ranked on: P19, P20, P569, whose
objects for P569 are years), up to 1,000 (subject, object) pairs from Wikidata claims, drawn
with a fixed seed, such that subject and object labels are single words, the object is a
single token in the candidate vocabulary of every configured model, and the pair is not in
the LAMA T-REx test set. LPAQA's released T-REx-train (``P*.jsonl`` with ``sub_uri,
obj_uri, sub_label, obj_label``) can be used instead to reproduce the paper exactly.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from ..config import schema_defaults
from ..contracts import FACTS
from ..io import KnowprobeError, read_jsonl

log = logging.getLogger(__name__)

_DEFAULTS = schema_defaults("lpaqa", "trex_train")

DROP_REASONS = {
    "no_label": "subject or object has no English (or mul) label",
    "not_single_word": "subject or object label is more than one word",
    "not_candidate": "object label is not a single-token candidate of every configured model",
    "in_test_set": "the pair is in the LAMA T-REx test set",
    "duplicate": "the same pair is stated more than once",
    "not_sampled": "beyond the per-relation sample size",
}


def relation_seed(seed: int, relation: str) -> np.random.Generator:
    """A generator per relation, so that selecting other relations never changes this one's sample."""
    return np.random.default_rng([seed, int(relation.lstrip("P"))])


def build(
    claims: pd.DataFrame,
    entities: pd.DataFrame,
    test_facts: pd.DataFrame,
    relations: list[str],
    candidate_words: list[set[str]],
    per_relation: int = _DEFAULTS["per_relation"],
    seed: int = _DEFAULTS["seed"],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """T-REx-train facts (the ``facts`` contract) and per-relation drop counts (``relation, reason, n``)."""
    repeated = entities["qid"].duplicated()
    if repeated.any():  # the Wikidata stage's gather keeps one of each; a table from elsewhere may not
        log.warning("%d entities listed more than once: the first of each is used", int(repeated.sum()))
    labels = entities[~repeated].set_index("qid")["label"]
    # a date claim's object is its year, its own label
    years = claims["object"].drop_duplicates()
    years = years[years.str.fullmatch(r"[0-9]+")]
    labels = pd.concat([labels, pd.Series(years.to_numpy(), index=years.to_numpy())])
    allowed = set.intersection(*candidate_words) if candidate_words else set()
    test_pairs = set(zip(test_facts["relation"], test_facts["sub_uri"], test_facts["obj_uri"]))
    frames, drops = [], []
    for relation in relations:
        pairs = claims.loc[claims["property"] == relation, ["subject", "object"]]
        counts = {}
        before = len(pairs)
        pairs = pairs.drop_duplicates()
        counts["duplicate"] = before - len(pairs)
        pairs = pairs.assign(sub_label=pairs["subject"].map(labels), obj_label=pairs["object"].map(labels))
        keep = pairs["sub_label"].notna() & pairs["obj_label"].notna()
        counts["no_label"] = int((~keep).sum())
        pairs = pairs[keep]
        keep = ~pairs["sub_label"].str.contains(r"\s", regex=True) & ~pairs["obj_label"].str.contains(r"\s", regex=True)
        counts["not_single_word"] = int((~keep).sum())
        pairs = pairs[keep]
        keep = pairs["obj_label"].isin(allowed)
        counts["not_candidate"] = int((~keep).sum())
        pairs = pairs[keep]
        keep = ~pd.Series(
            [(relation, s, o) in test_pairs for s, o in zip(pairs["subject"], pairs["object"])],
            index=pairs.index,
            dtype=bool,
        )
        counts["in_test_set"] = int((~keep).sum())
        # sorted first: the sample must not depend on the order in which dump chunks were gathered
        pairs = pairs[keep].sort_values(["subject", "object"], kind="stable").reset_index(drop=True)
        if len(pairs) > per_relation:
            chosen = np.sort(relation_seed(seed, relation).choice(len(pairs), size=per_relation, replace=False))
            counts["not_sampled"] = len(pairs) - per_relation
            pairs = pairs.iloc[chosen]
        frames.append(
            pd.DataFrame(
                {
                    "relation": relation,
                    "fact_id": [f"{relation}-{s}-{o}" for s, o in zip(pairs["subject"], pairs["object"])],
                    "sub_uri": pairs["subject"].to_numpy(),
                    "sub_label": pairs["sub_label"].to_numpy(),
                    "obj_uri": pairs["object"].to_numpy(),
                    "obj_label": pairs["obj_label"].to_numpy(),
                    "origin": "wikidata",
                    "judgments_yes": 0,
                    "judgments_no": 0,
                },
                columns=FACTS.columns,
            )
        )
        drops += [
            {"relation": relation, "reason": r, "description": DROP_REASONS[r], "n": n} for r, n in counts.items() if n
        ]
        log.info(
            "%s: %d pairs (%s)",
            relation,
            len(pairs),
            ", ".join(f"{r} {n}" for r, n in counts.items() if n) or "nothing dropped",
        )
    facts = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=FACTS.columns)
    return facts, pd.DataFrame(drops, columns=["relation", "reason", "description", "n"])


def split(facts: pd.DataFrame, train_share: float, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """T-REx-train's train and dev splits: per relation a seeded draw of int(train_share * pairs)
    facts for train, the rest for dev, each kept in the order of ``facts``."""
    chosen = np.zeros(len(facts), dtype=bool)
    for relation, rows in facts.groupby("relation", sort=True).indices.items():
        permuted = relation_seed(seed, relation).permutation(rows)
        chosen[permuted[: int(train_share * len(rows))]] = True
    return facts[chosen].reset_index(drop=True), facts[~chosen].reset_index(drop=True)


def read_lpaqa(directory: str | Path, relations: list[str], optional: set[str] = frozenset()) -> pd.DataFrame:
    """LPAQA's released T-REx-train: one ``P*.jsonl`` per relation (those in ``optional`` may lack
    one: the release covers LAMA's T-REx relations only, not P569)."""
    directory = Path(directory)
    frames = []
    for relation in relations:
        path = directory / f"{relation}.jsonl"
        if not path.is_file() and relation in optional:
            log.warning("%s: not in LPAQA's T-REx-train; its prompts are ranked by their set's order", relation)
            continue
        if not path.is_file():
            raise KnowprobeError(f"{path}: file not found (LPAQA's T-REx-train has one file per relation)")
        rows = [
            {
                "relation": relation,
                "fact_id": f"{relation}-{r['sub_uri']}-{r['obj_uri']}",
                "sub_uri": r["sub_uri"],
                "sub_label": r["sub_label"],
                "obj_uri": r["obj_uri"],
                "obj_label": r["obj_label"],
                "origin": "lpaqa",
                "judgments_yes": 0,
                "judgments_no": 0,
            }
            for _, r in read_jsonl(path, required=("sub_uri", "obj_uri", "sub_label", "obj_label"))
        ]
        frames.append(pd.DataFrame(rows, columns=FACTS.columns))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=FACTS.columns)


def without_test_pairs(facts: pd.DataFrame, test_facts: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Facts whose (relation, subject, object) is not a test fact, and the drop counts
    (``in_test_set``) per relation: the released T-REx-train held none of LAMA's test pairs, but a
    configured test set may hold others."""
    test_pairs = set(zip(test_facts["relation"], test_facts["sub_uri"], test_facts["obj_uri"]))
    in_test = np.array(
        [pair in test_pairs for pair in zip(facts["relation"], facts["sub_uri"], facts["obj_uri"])], bool
    )
    counts = facts.loc[in_test].groupby("relation").size()
    dropped = pd.DataFrame(
        [
            {"relation": r, "reason": "in_test_set", "description": DROP_REASONS["in_test_set"], "n": int(n)}
            for r, n in counts.items()
        ],
        columns=["relation", "reason", "description", "n"],
    )
    return facts.loc[~in_test].reset_index(drop=True), dropped


def check_not_empty(facts: pd.DataFrame, dropped: pd.DataFrame, relations: list[str]) -> None:
    """A WARNING for each relation without facts, with its drop counts by reason; an error when
    no relation has any (the stages after it would run on nothing)."""
    have = set(facts["relation"])
    for relation in relations:
        if relation not in have:
            reasons = dropped[dropped["relation"] == relation]
            log.warning(
                "%s: no T-REx-train fact (dropped: %s)",
                relation,
                ", ".join(f"{r} {n}" for r, n in zip(reasons["reason"], reasons["n"])) or "no claim of the relation",
            )
    if facts.empty:
        totals = dropped.groupby("reason")["n"].sum()
        raise KnowprobeError(
            "T-REx-train is empty for every relation (dropped: "
            + (", ".join(f"{r} {n}" for r, n in totals.items()) or "no claims of the relations")
            + "): mining and selection would run on nothing"
        )


def statistics(facts: pd.DataFrame) -> pd.DataFrame:
    """LPAQA's Table 1 per relation: pairs, unique subjects (by label), unique objects, object entropy (nats)."""
    rows = []
    for relation, group in facts.groupby("relation", sort=True):
        shares = group["obj_label"].value_counts(normalize=True).to_numpy()
        rows.append(
            {
                "relation": relation,
                "pairs": len(group),
                "unique_subjects": group["sub_label"].nunique(),
                "unique_objects": group["obj_label"].nunique(),
                "object_entropy": float(-(shares * np.log(shares)).sum()),
            }
        )
    return pd.DataFrame(rows, columns=["relation", "pairs", "unique_subjects", "unique_objects", "object_entropy"])


def google_re_train(facts: pd.DataFrame, test: pd.DataFrame, relations: dict[str, str]) -> pd.DataFrame:
    """Google-RE's train_dev split: the T-REx-train facts of the relation each Google-RE relation
    maps to (``relations``, e.g. ``place_of_birth: P19``), renamed to it, less those whose (subject,
    object) labels are a Google-RE test fact of it. Google-RE's ids are Freebase's, so labels are
    what can be compared. Logs each relation's counts."""
    test_pairs = set(zip(test["relation"], test["sub_label"], test["obj_label"]))
    parts = []
    for relation, source in relations.items():
        part = facts[facts["relation"] == source].assign(relation=relation)
        in_test = np.array([(relation, s, o) in test_pairs for s, o in zip(part["sub_label"], part["obj_label"])], bool)
        log.info(
            "%s: %d T-REx-train facts of %s (%d more left out: a test fact)",
            relation,
            (~in_test).sum(),
            source,
            in_test.sum(),
        )
        if part.empty:
            log.warning(
                "%s: T-REx-train has no facts of %s, so its prompts are ranked by the set's order", relation, source
            )
        parts.append(part[~in_test])
    return pd.concat(parts, ignore_index=True) if parts else facts.iloc[:0]
