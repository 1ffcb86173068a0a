"""LAMA import: relations, T-REx and Google-RE facts, and the manual prompt set.

Reads a directory laid out like LAMA's unpacked ``data.zip``::

    relations.jsonl          relation, template, label, description, type
    TREx/P19.jsonl ...       uuid, sub_uri, sub_label, obj_uri, obj_label, predicate_id, evidences
    Google_RE/place_of_birth_test.jsonl ...   sub, obj, sub_label, obj_label, judgments, uuid, ...

and writes facts of the ``facts`` contract. Nothing is filtered here: the
model-dependent filter (``vocab.filter_facts``) drops facts and reports why.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from ..contracts import FACTS
from ..io import MAX_TEXT_CHARACTERS, KnowprobeError, quoted, read_jsonl, too_long_text
from ..prompts import check_template, prompt_table
from .trex_train import sampled

log = logging.getLogger(__name__)

GOOGLE_RE_RELATIONS = ("place_of_birth", "date_of_birth", "place_of_death")


def read_relations(path: str | Path) -> pd.DataFrame:
    """LAMA's relations.jsonl; every template is checked for one [X] and one [Y]."""
    rows = []
    for number, record in read_jsonl(path, required=("relation", "template")):
        check_template(record["template"], f"{path}:{number}")
        rows.append(
            {
                "relation": record["relation"],
                "template": record["template"],
                "label": record.get("label", ""),
                "type": record.get("type", ""),
            }
        )
    if not rows:
        raise KnowprobeError(f"{path}: no relations")
    frame = pd.DataFrame(rows)
    duplicated = frame["relation"][frame["relation"].duplicated()]
    if len(duplicated):
        raise KnowprobeError(f"{path}: relation {duplicated.iloc[0]!r} is listed twice")
    return frame


def _label(record: dict, key: str, where: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not value.strip():
        raise KnowprobeError(f"{where}: {key!r} is missing or empty")
    return value.strip()


def read_trex_relation(path: str | Path, relation: str) -> pd.DataFrame:
    rows = []
    for number, record in read_jsonl(path, required=("sub_label", "obj_label")):
        where = f"{path}:{number}"
        predicate = record.get("predicate_id", relation)
        if predicate != relation:
            raise KnowprobeError(f"{where}: predicate_id {predicate!r} in the file of {relation}")
        rows.append(
            {
                "relation": relation,
                "fact_id": record.get("uuid") or f"{relation}-{number}",
                "sub_uri": record.get("sub_uri", ""),
                "sub_label": _label(record, "sub_label", where),
                "obj_uri": record.get("obj_uri", ""),
                "obj_label": _label(record, "obj_label", where),
                "origin": "lama-trex",
                "judgments_yes": 0,
                "judgments_no": 0,
            }
        )
    return pd.DataFrame(rows, columns=FACTS.columns)


def read_trex(data_dir: str | Path, relations: pd.DataFrame, selected: list[str] | None = None) -> pd.DataFrame:
    """T-REx facts of every relation in relations.jsonl that has a file (LAMA: 41 of 46)."""
    trex_dir = Path(data_dir) / "TREx"
    if not trex_dir.is_dir():
        raise KnowprobeError(f"{trex_dir}: directory not found (expected LAMA's TREx/ folder)")
    wanted = list(relations["relation"]) if selected is None else selected
    unknown = sorted(set(wanted) - set(relations["relation"]))
    if unknown:
        raise KnowprobeError(f"lama.relations: {unknown[0]!r} is not in relations.jsonl")
    frames, missing = [], []
    for relation in wanted:
        path = trex_dir / f"{relation}.jsonl"
        if path.is_file():
            frames.append(read_trex_relation(path, relation))
        else:
            missing.append(relation)
    if missing:
        # LAMA ships no T-REx facts for P166, P69, P54, P1923 and P102: reported, not an error
        log.info("%d relations of relations.jsonl have no T-REx file: %s", len(missing), ", ".join(missing))
    if not frames:
        raise KnowprobeError(f"{trex_dir}: no T-REx relation files for the selected relations")
    facts = drop_too_long(drop_repeated_ids(pd.concat(frames, ignore_index=True), trex_dir), trex_dir)
    log.info("T-REx: %d facts in %d relations", len(facts), facts["relation"].nunique())
    return facts


def sample_per_relation(facts: pd.DataFrame, per_relation: int | None, seed: int = 0) -> pd.DataFrame:
    """A seeded draw of at most ``per_relation`` facts of each relation (``lpaqa.lama.per_relation``),
    in the file's order; None keeps every fact. Each relation draws with its own generator (seed and
    relation id, as T-REx-train's sample), so that selecting other relations never changes it. The
    draw comes before any model's vocabulary filter: a model keeps those of the drawn facts it can
    answer. What is left out is counted in the log."""
    if per_relation is None:
        return facts
    drawn, _ = sampled(facts, per_relation, seed)  # the draw T-REx-train makes (trex_train.sampled)
    log.info(
        "lama.per_relation: a seeded draw (seed %d) of at most %d facts a relation: %d of %d facts kept, %d left out",
        seed,
        per_relation,
        len(drawn),
        len(facts),
        len(facts) - len(drawn),
    )
    return drawn


def objects_by_relation(facts: pd.DataFrame) -> dict[str, list[str]]:
    """Each relation's distinct object labels, sorted: the statement score's default C_r of these
    facts (``probe.candidate_sets``), kept beside a run's draw so that the draw leaves it whole."""
    return {relation: sorted(set(group)) for relation, group in facts.groupby("relation", sort=True)["obj_label"]}


def majority_objects(facts: pd.DataFrame) -> dict[str, str]:
    """Each relation's most frequent object label in ``facts`` (ties: first by label): what the
    Majority baseline predicts (``metrics.majority``), chosen on a run's facts before its own draw."""
    counts = facts.groupby(["relation", "obj_label"], sort=True).size().rename("n").reset_index()
    top = counts.sort_values(["relation", "n", "obj_label"], ascending=[True, False, True], kind="stable")
    return dict(top.drop_duplicates("relation")[["relation", "obj_label"]].itertuples(index=False, name=None))


def sample_run(
    kept: pd.DataFrame, dropped: pd.DataFrame, per_relation: int | None, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A run's own draw (``lpaqa.probe.sample``): at most ``per_relation`` of the facts LAMA's
    filter ``kept`` for it, per relation (the draw of ``sample_per_relation``), and the filter's
    drop counts ``dropped`` with the facts left out added (``not_sampled``). None keeps them all.
    After the filter, so that a run asked N facts a relation gets N it can answer."""
    if per_relation is None:
        return kept, dropped
    drawn, left_out = sampled(kept, per_relation, seed)
    log.info(
        "lpaqa.probe.sample: a seeded draw (seed %d) of at most %d facts a relation: "
        "%d of %d facts kept, %d not_sampled",
        seed,
        per_relation,
        len(drawn),
        len(kept),
        len(kept) - len(drawn),
    )
    frames = [frame for frame in (dropped, left_out) if len(frame)]
    dropped = pd.concat(frames, ignore_index=True) if frames else dropped
    return drawn, dropped  # trex_train.sampled numbers its rows anew


def read_google_re(data_dir: str | Path) -> pd.DataFrame:
    """LAMA's Google-RE test files; relation ids are the file stems (place_of_birth, ...)."""
    google_dir = Path(data_dir) / "Google_RE"
    frames = []
    for relation in GOOGLE_RE_RELATIONS:
        path = google_dir / f"{relation}_test.jsonl"
        rows = []
        for number, record in read_jsonl(path, required=("sub_label", "obj_label")):
            where = f"{path}:{number}"
            votes = [judgment.get("judgment") for judgment in record.get("judgments", [])]
            rows.append(
                {
                    "relation": relation,
                    "fact_id": record.get("uuid") or f"{relation}-{number}",
                    "sub_uri": record.get("sub", ""),
                    "sub_label": _label(record, "sub_label", where),
                    "obj_uri": record.get("obj", ""),
                    "obj_label": _label(record, "obj_label", where),
                    "origin": "lama-google-re",
                    "judgments_yes": sum(vote == "yes" for vote in votes),
                    "judgments_no": sum(vote != "yes" for vote in votes),
                }
            )
        frames.append(pd.DataFrame(rows, columns=FACTS.columns))
    facts = drop_too_long(drop_repeated_ids(pd.concat(frames, ignore_index=True), google_dir), google_dir)
    log.info("Google-RE: %d facts in %d relations", len(facts), facts["relation"].nunique())
    return facts


def drop_too_long(facts: pd.DataFrame, where: Path) -> pd.DataFrame:
    """The facts less those whose subject or object is longer than any model takes
    (``io.MAX_TEXT_CHARACTERS``): counted and logged, the first quoted, left out."""
    long = facts["sub_label"].map(too_long_text) | facts["obj_label"].map(too_long_text)
    if long.any():
        first = facts.loc[long].iloc[0]
        text = first["sub_label"] if too_long_text(first["sub_label"]) else first["obj_label"]
        log.warning(
            "%s: %d facts have a label longer than %s characters and are left out (too_long), first %s %s: %s",
            where,
            int(long.sum()),
            f"{MAX_TEXT_CHARACTERS:,}",
            first["relation"],
            first["fact_id"],
            quoted(text),
        )
    return facts[~long].reset_index(drop=True)


def drop_repeated_ids(facts: pd.DataFrame, where: Path) -> pd.DataFrame:
    """The facts less those whose uuid an earlier fact (of any relation) already has: counted
    and logged, the first kept (a fact id is unique within a table, as the contract says)."""
    again = facts["fact_id"].duplicated()
    if again.any():
        examples = facts.loc[again, ["relation", "fact_id"]].head(3).to_records(index=False).tolist()
        log.warning(
            "%s: %d facts reuse a uuid given earlier and are left out (first kept), e.g. %s",
            where,
            int(again.sum()),
            ", ".join(f"{relation} {uuid}" for relation, uuid in examples),
        )
    return facts[~again].reset_index(drop=True)


def manual_prompts(relations: pd.DataFrame, google_re_templates: dict[str, str]) -> pd.DataFrame:
    """The manual prompt set ("Man"): LAMA's template per T-REx relation plus Google-RE's."""
    rows = [
        {"relation": r.relation, "template": r.template, "source": "manual", "rank": 0, "score": float("nan")}
        for r in relations.itertuples()
    ]
    for relation, template in google_re_templates.items():
        check_template(template, f"config lama.google_re_templates.{relation}")
        rows.append({"relation": relation, "template": template, "source": "manual", "rank": 0, "score": float("nan")})
    return prompt_table(rows)
