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
import re
import zlib
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
    "subject_in_test_set": "the subject is a subject of the relation in the LAMA T-REx test set",
    "duplicate": "the same pair is stated more than once",
    "not_sampled": "beyond the per-relation sample size",
}


def relation_seed(seed: int, relation: str) -> np.random.Generator:
    """A generator per relation, so that selecting other relations never changes this one's sample."""
    # a Wikidata id by its number (T-REx-train's samples since the start); a named relation
    # (Google-RE's place_of_birth, ...) by a checksum of its name
    key = int(relation[1:]) if relation[:1] == "P" and relation[1:].isdigit() else zlib.crc32(relation.encode())
    return np.random.default_rng([seed, key])


def draw(n: int, per_relation: int, seed: int, relation: str) -> np.ndarray | None:
    """The positions, ascending, of a relation's seeded draw of ``per_relation`` of its ``n``
    pairs; None where all ``n`` are kept."""
    if n <= per_relation:
        return None
    return np.sort(relation_seed(seed, relation).choice(n, size=per_relation, replace=False))


def wikidata_datasets(claims, entities):
    """The Wikidata stage's claims and entities tables, checked against their contracts, as
    ``pyarrow.dataset`` datasets: streamed, so that a full dump's tables are never all in memory
    (issue 30)."""
    import pyarrow.dataset as ds

    from ..contracts import CLAIMS, ENTITIES, check

    check(claims, CLAIMS)
    check(entities, ENTITIES)
    return ds.dataset(claims), ds.dataset(entities)


def build(
    claims: pd.DataFrame,
    entities: pd.DataFrame,
    test_facts: pd.DataFrame,
    relations: list[str],
    candidate_words: list[set[str]] | None,
    per_relation: int = _DEFAULTS["per_relation"],
    seed: int = _DEFAULTS["seed"],
    **options,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """T-REx-train facts (the ``facts`` contract) and per-relation drop counts (``relation, reason,
    n``) from tables in memory (``build_from`` reads the Wikidata stage's files the same way, and
    takes the same ``options``)."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    def dataset(frame, columns):
        return ds.dataset(pa.Table.from_pandas(frame[columns].astype(object), preserve_index=False))

    return build_from(
        dataset(claims, ["subject", "property", "object"]),
        dataset(entities, [c for c in ("qid", "label", "aliases") if c in entities.columns]),
        test_facts,
        relations,
        candidate_words,
        per_relation,
        seed,
        **options,
    )


def build_from(
    claims,
    entities,
    test_facts: pd.DataFrame,
    relations: list[str],
    candidate_words: list[set[str]] | None,
    per_relation: int = _DEFAULTS["per_relation"],
    seed: int = _DEFAULTS["seed"],
    one_word: bool = True,
    test_subjects: bool = False,
    aliases: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """T-REx-train from the claims and entities datasets (``pyarrow.dataset``: the Wikidata
    stage's Parquet files), streamed: what is held is a byte of flags per entity (labelled, one
    word, a candidate) and two integers per claim of the relations, never the tables themselves.

    Per relation, as LPAQA built it: the (subject, object) pairs of its claims, each pair once
    (``duplicate``), both ends labelled (``no_label``: an entity without an English or mul label;
    a date's object is its year, its own label), both labels one word (``not_single_word``), the
    object a single-token candidate of every configured model (``not_candidate``), not a LAMA
    T-REx test pair (``in_test_set``); then, in the order of the ids as strings, a seeded draw of
    ``per_relation`` (``not_sampled``).

    The same machinery builds other fact sets (``knowprobe.lpaqa.multitoken``): ``candidate_words``
    None skips the single-token filter, ``one_word`` False the one-word filter; ``test_subjects``
    drops every pair whose subject is a subject of the relation in the test set
    (``subject_in_test_set``, in place of ``in_test_set``); ``aliases`` adds ``sub_aliases`` and
    ``obj_aliases`` (the entities table's aliases; none for a year)."""
    import pyarrow.compute as pc

    allowed = set.intersection(*candidate_words) if candidate_words else set()
    codes = IdCodes(allowed)
    flags = codes.entity_flags(entities)
    pairs = codes.claim_pairs(claims, relations)
    test_pairs = codes.test_pairs(test_facts)
    filters = [("no_label", LABELLED, LABELLED)]
    if one_word:
        filters.append(("not_single_word", ONE_WORD, ONE_WORD))
    if candidate_words is not None:
        filters.append(("not_candidate", None, CANDIDATE))
    chosen, drops = {}, []
    for relation in relations:
        counts = {}
        parts = pairs.pop(relation, [])  # freed as the relation is done: one relation's claims at a time
        before = sum(len(s) for s, _ in parts)
        subjects, objects = unique_pairs(parts)
        del parts
        counts["duplicate"] = before - len(subjects)
        for reason, subject_bit, object_bit in filters:
            keep = codes.has(flags, objects, object_bit)
            if subject_bit is not None:
                keep &= codes.has(flags, subjects, subject_bit)
            counts[reason] = int((~keep).sum())
            subjects, objects = subjects[keep], objects[keep]
        tested = test_pairs.get(relation, set())
        if test_subjects:
            keep = ~np.isin(subjects, np.fromiter((s for s, _ in tested), np.int64, len(tested)))
            counts["subject_in_test_set"] = int((~keep).sum())
        else:
            keep = np.fromiter(
                ((s, o) not in tested for s, o in zip(subjects.tolist(), objects.tolist())), bool, len(subjects)
            )
            counts["in_test_set"] = int((~keep).sum())
        subjects, objects = subjects[keep], objects[keep]
        # in the order of the ids as strings: the sample must not depend on the order in which
        # dump chunks were gathered, and this is the order LPAQA's build (and ours before) drew from
        order = pc.sort_indices(
            pa_table({"s": codes.strings(subjects), "o": codes.strings(objects)}),
            [("s", "ascending"), ("o", "ascending")],
        ).to_numpy()
        subjects, objects = subjects[order], objects[order]
        picked = draw(len(subjects), per_relation, seed, relation)
        if picked is not None:
            counts["not_sampled"] = len(subjects) - per_relation
            subjects, objects = subjects[picked], objects[picked]
        chosen[relation] = (subjects, objects)
        drops += [
            {"relation": relation, "reason": r, "description": DROP_REASONS[r], "n": n} for r, n in counts.items() if n
        ]
        log.info(
            "%s: %d pairs (%s)",
            relation,
            len(subjects),
            ", ".join(f"{r} {n}" for r, n in counts.items() if n) or "nothing dropped",
        )
    everyone = np.concatenate([np.concatenate(p) for p in chosen.values()] or [np.empty(0, np.int64)])
    labels = codes.labels(entities, everyone)
    other_names = codes.aliases(entities, everyone) if aliases else {}
    columns = FACTS.columns + (["sub_aliases", "obj_aliases"] if aliases else [])
    frames = []
    for relation, (subjects, objects) in chosen.items():
        sub_uri, obj_uri = codes.strings(subjects).to_pylist(), codes.strings(objects).to_pylist()
        frames.append(
            pd.DataFrame(
                {
                    "relation": relation,
                    "fact_id": [f"{relation}-{s}-{o}" for s, o in zip(sub_uri, obj_uri)],
                    "sub_uri": sub_uri,
                    "sub_label": [labels[c] for c in subjects.tolist()],
                    "obj_uri": obj_uri,
                    "obj_label": [labels[c] for c in objects.tolist()],
                    "origin": "wikidata",
                    "judgments_yes": 0,
                    "judgments_no": 0,
                    **(
                        {
                            "sub_aliases": [other_names.get(c, []) for c in subjects.tolist()],
                            "obj_aliases": [other_names.get(c, []) for c in objects.tolist()],
                        }
                        if aliases
                        else {}
                    ),
                },
                columns=columns,
            )
        )
    facts = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
    return facts, pd.DataFrame(drops, columns=["relation", "reason", "description", "n"])


LABELLED, ONE_WORD, CANDIDATE, SEEN = 1, 2, 4, 8
# Python's \s, which LPAQA's (and pandas') one-word test used: every character that isspace()
WHITESPACE = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in map(chr, range(0x110000)) if c.isspace()) + "]"


def pa_table(columns: dict):
    import pyarrow as pa

    return pa.table(columns)


def unique_pairs(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Each (subject, object) pair of the parts once, as int64 codes. Pairs whose codes fit in 32
    bits (items below Q2147483648, years) are sorted as one int64 key each, a third of what sorting
    pairs of integers takes: P31's 120 million claims are a full dump's largest relation."""
    if not parts:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    if all(s.dtype == np.int32 and o.dtype == np.int32 for s, o in parts):
        keys = np.concatenate([(s.astype(np.int64) << 32) | (o.astype(np.int64) & 0xFFFFFFFF) for s, o in parts])
        keys = np.unique(keys)
        return keys >> 32, (keys & 0xFFFFFFFF).astype(np.uint32).astype(np.int32).astype(np.int64)
    stacked = np.concatenate([np.stack([s.astype(np.int64), o.astype(np.int64)], axis=1) for s, o in parts])
    unique = np.unique(stacked, axis=0)
    return unique[:, 0], unique[:, 1]


def narrow(codes: np.ndarray) -> np.ndarray:
    """Codes as int32 where all fit, else as they are."""
    if len(codes) and (codes.min() < np.iinfo(np.int32).min or codes.max() > np.iinfo(np.int32).max):
        return codes
    return codes.astype(np.int32)


class IdCodes:
    """Wikidata ids as int64 codes, so that a claim costs two integers and an entity a byte of
    flags: an item "Q42" is 42; a year "1756" (a date's object) is -1756; anything else gets a code
    of its own below both (from a table not made by the Wikidata stage), whose flags a dict holds."""

    OTHER = -(1 << 50)

    def __init__(self, allowed: set[str]):
        self.allowed = allowed
        self.others: dict[str, int] = {}
        self.other_flags: dict[int, int] = {}
        self.numerals: set[int] = set()  # others written in digits ("0042"), each its own label

    def encode(self, ids) -> np.ndarray:
        """Codes of an Arrow string array of ids."""
        import pyarrow as pa
        import pyarrow.compute as pc

        ids = pa.chunked_array([ids]) if not isinstance(ids, pa.ChunkedArray) else ids
        ids = ids.combine_chunks() if ids.num_chunks != 1 else ids.chunk(0)
        out = np.empty(len(ids), dtype=np.int64)
        item = pc.fill_null(pc.match_substring_regex(ids, r"^Q(0|[1-9][0-9]{0,17})$"), False).to_numpy(
            zero_copy_only=False
        )
        year = pc.fill_null(pc.match_substring_regex(ids, r"^[1-9][0-9]{0,14}$"), False).to_numpy(zero_copy_only=False)
        if item.any():
            out[item] = pc.cast(pc.utf8_slice_codeunits(ids.filter(pa.array(item)), 1), pa.int64()).to_numpy()
        if year.any():
            out[year] = -pc.cast(ids.filter(pa.array(year)), pa.int64()).to_numpy()
        for row in np.flatnonzero(~(item | year)).tolist():
            value = ids[row].as_py()
            if value not in self.others:
                self.others[value] = self.OTHER - len(self.others) - 1
                if value is not None and re.fullmatch("[0-9]+", value):  # "0042": a year as written, its own label
                    self.other_flags[self.others[value]] = (
                        LABELLED | ONE_WORD | (CANDIDATE if value in self.allowed else 0)
                    )
                    self.numerals.add(self.others[value])
            out[row] = self.others[value]
        return out

    def strings(self, codes: np.ndarray):
        """The ids of codes, as an Arrow string array."""
        import pyarrow as pa

        names = {code: name for name, code in self.others.items()}
        return pa.array(
            [f"Q{c}" if c >= 0 else str(-c) if c > self.OTHER else names[c] for c in codes.tolist()], pa.string()
        )

    def entity_flags(self, entities) -> np.ndarray:
        """A byte per item number: labelled, one word, a candidate (the first row of a qid counts,
        as the Wikidata stage keeps the first of an entity listed twice)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        flags = np.zeros(0, dtype=np.uint8)
        allowed_array = pa.array(sorted(self.allowed), pa.string())
        repeated = 0
        for batch in entities.to_batches(columns=["qid", "label"]):
            codes = self.encode(batch.column("qid"))
            label = batch.column("label")
            bits = np.where(pc.is_valid(label).to_numpy(zero_copy_only=False), LABELLED, 0).astype(np.uint8)
            spaced = pc.fill_null(pc.match_substring_regex(label, WHITESPACE), True).to_numpy(zero_copy_only=False)
            bits |= np.where(~spaced, ONE_WORD, 0).astype(np.uint8)
            bits |= np.where(
                pc.is_in(label, value_set=allowed_array).to_numpy(zero_copy_only=False), CANDIDATE, 0
            ).astype(np.uint8)
            bits |= SEEN
            items = codes >= 0
            if items.any() and codes[items].max() >= len(flags):  # grown by a quarter at a time
                grown = np.zeros(int(codes[items].max()) + 1 + len(flags) // 4, dtype=np.uint8)
                grown[: len(flags)] = flags
                flags = grown
            for row in np.flatnonzero(~items).tolist():  # ids the Wikidata stage never writes
                self.other_flags.setdefault(int(codes[row]), int(bits[row]))
            numbers, item_bits = codes[items], bits[items]
            # the first row of each qid: within the batch, then against earlier batches
            _, first = np.unique(numbers, return_index=True)
            fresh = np.zeros(len(numbers), dtype=bool)
            fresh[first] = True
            fresh &= flags[numbers] & SEEN == 0
            repeated += int(len(numbers) - fresh.sum())
            flags[numbers[fresh]] = item_bits[fresh]
        if repeated:  # the Wikidata stage's gather keeps one of each; a table from elsewhere may not
            log.warning("%d entities listed more than once: the first of each is used", repeated)
        return flags

    def has(self, flags: np.ndarray, codes: np.ndarray, bit: int) -> np.ndarray:
        """Whether the entities of ``codes`` have a flag; a year is labelled with itself, one word,
        and a candidate where the year is a candidate word."""
        out = np.zeros(len(codes), dtype=bool)
        items = codes >= 0
        inside = items & (codes < len(flags))
        out[inside] = flags[codes[inside]] & bit != 0
        years = (codes < 0) & (codes > self.OTHER)
        if years.any():
            if bit == CANDIDATE:
                out[years] = [str(-c) in self.allowed for c in codes[years].tolist()]
            else:
                out[years] = True
        for row in np.flatnonzero(codes <= self.OTHER).tolist():
            out[row] = self.other_flags.get(int(codes[row]), 0) & bit != 0
        return out

    def claim_pairs(self, claims, relations: list[str]) -> dict[str, list[tuple[np.ndarray, np.ndarray]]]:
        """Per relation, the codes of its claims' subjects and objects in parts, read a batch at a
        time: int32 where they fit (four bytes a code: a full dump's 250 million claims of the
        relations take 2 GB), int64 otherwise."""
        import pyarrow as pa
        import pyarrow.compute as pc

        parts: dict[str, list] = {relation: [] for relation in relations}
        wanted = pa.array(relations, pa.string())
        for batch in claims.to_batches(
            columns=["subject", "property", "object"], filter=pc.field("property").isin(wanted)
        ):
            if not batch.num_rows:
                continue
            subjects = narrow(self.encode(batch.column("subject")))
            objects = narrow(self.encode(batch.column("object")))
            properties = batch.column("property").dictionary_encode()
            codes = properties.indices.to_numpy(zero_copy_only=False)
            for index, relation in enumerate(properties.dictionary.to_pylist()):
                rows = codes == index
                parts[relation].append((subjects[rows], objects[rows]))
        return {relation: found for relation, found in parts.items() if found}

    def test_pairs(self, test_facts: pd.DataFrame) -> dict[str, set[tuple[int, int]]]:
        import pyarrow as pa

        out: dict[str, set] = {}
        if test_facts.empty:
            return out
        subjects = self.encode(pa.array(test_facts["sub_uri"].astype(object), pa.string()))
        objects = self.encode(pa.array(test_facts["obj_uri"].astype(object), pa.string()))
        for relation, s, o in zip(test_facts["relation"], subjects.tolist(), objects.tolist()):
            out.setdefault(relation, set()).add((s, o))
        return out

    def labels(self, entities, codes: np.ndarray) -> dict[int, str]:
        """The labels of the entities of ``codes`` (the first row of each qid), years their own."""
        import pyarrow.compute as pc

        out = {int(c): str(-c) for c in codes.tolist() if self.OTHER < c < 0}
        out.update({code: name for name, code in self.others.items() if code in self.numerals})
        wanted = np.unique(codes[(codes >= 0) | (codes <= self.OTHER)])
        if not len(wanted):
            return out
        names = self.strings(wanted)
        for batch in entities.to_batches(columns=["qid", "label"], filter=pc.field("qid").isin(names)):
            for code, label in zip(self.encode(batch.column("qid")).tolist(), batch.column("label").to_pylist()):
                out.setdefault(code, label)
        return out

    def aliases(self, entities, codes: np.ndarray) -> dict[int, list[str]]:
        """The aliases of the entities of ``codes`` (the first row of each qid, as for labels; an
        entity without aliases, a year, or a table without the column: none)."""
        import pyarrow.compute as pc

        wanted = np.unique(codes[(codes >= 0) | (codes <= self.OTHER)])
        if not len(wanted) or "aliases" not in entities.schema.names:
            return {}
        out: dict[int, list[str]] = {}
        for batch in entities.to_batches(columns=["qid", "aliases"], filter=pc.field("qid").isin(self.strings(wanted))):
            for code, names in zip(self.encode(batch.column("qid")).tolist(), batch.column("aliases").to_pylist()):
                out.setdefault(code, list(names or []))
        return out


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


def sampled(facts: pd.DataFrame, per_relation: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """At most ``per_relation`` facts of each relation, the seeded draw ``build_from`` makes, kept
    in the file's order, and the drop counts (``not_sampled``) per relation. LPAQA's release holds
    at most 1,000 pairs a relation, so the default (1,000) keeps it whole."""
    kept, drops = [], []
    for relation, group in facts.groupby("relation", sort=False):
        picked = draw(len(group), per_relation, seed, relation)
        if picked is not None:
            drops.append(
                {
                    "relation": relation,
                    "reason": "not_sampled",
                    "description": DROP_REASONS["not_sampled"],
                    "n": len(group) - per_relation,
                }
            )
            group = group.iloc[picked]
        kept.append(group)
    out = pd.concat(kept, ignore_index=True) if kept else facts.iloc[:0]
    return out, pd.DataFrame(drops, columns=["relation", "reason", "description", "n"])


def warn_empty_relations(facts: pd.DataFrame, dropped: pd.DataFrame, relations: list[str], what: str) -> None:
    """A WARNING for each relation without facts ("P36: no {what} fact"), with its drop counts by
    reason (an empty relation is a finding to report: the other relations still stand)."""
    have = set(facts["relation"])
    for relation in relations:
        if relation not in have:
            reasons = dropped[dropped["relation"] == relation]
            log.warning(
                "%s: no %s fact (dropped: %s)",
                relation,
                what,
                ", ".join(f"{r} {n}" for r, n in zip(reasons["reason"], reasons["n"])) or "no claim of the relation",
            )


def check_not_empty(facts: pd.DataFrame, dropped: pd.DataFrame, relations: list[str]) -> None:
    """A WARNING for each relation without facts, with its drop counts by reason; an error when
    no relation has any (the stages after it would run on nothing)."""
    warn_empty_relations(facts, dropped, relations, "T-REx-train")
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
