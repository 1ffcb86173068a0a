"""Knowprobe's consistency held to ParaRel's own computation (yanaiela/pararel,
``pararel/consistency/encode_consistency_probe.py``: ``analyze_results`` and
``group_score_lama_eval``), reimplemented here from reading that code, on relations whose subjects
lose different patterns to the article rule (P1303 has a single "a [Y]" pattern), and on one whose
prompts never agree (where ParaRel's ``analyze_results`` divides by zero after its consistency)."""

import numpy as np
import pandas as pd
import pytest

from knowprobe.lpaqa import consistency

VOWELS = ("a", "e", "i", "o", "u")


def pararel_filter(pattern: str, gold: str) -> bool:
    """``filter_a_an_vowel_mismatch``: the word before the one holding [Y] is "a" and the gold
    starts with a vowel, or "an" and it does not."""
    words = pattern.split(" ")
    (y,) = [i for i, word in enumerate(words) if "[Y]" in word]
    if y == 0:
        return False
    vowel = gold.lower().startswith(VOWELS)
    return (words[y - 1] == "a" and vowel) or (words[y - 1] == "an" and not vowel)


def pararel_analyze(results: dict) -> tuple[float, float]:
    """``analyze_results`` over a complete pattern graph (every ordered pair of patterns an edge):
    ``results[pattern][subject] = (prediction, gold)``. Returns its ``consistency`` (agreeing
    ordered pairs of kept patterns over pairs, pooled over the relation's subjects; -1 without
    pairs) and ``consistent_subjects`` (subjects with a kept pattern whose kept patterns give one
    answer)."""
    points = total = 0
    answers = {}
    for pattern, by_subject in results.items():
        for subject, (prediction, gold) in by_subject.items():
            if pararel_filter(pattern, gold):
                continue
            answers.setdefault(subject, []).append(prediction)
            for other in results:
                if other == pattern or pararel_filter(other, gold):
                    continue
                points += prediction == results[other][subject][0]
                total += 1
    agreeing = sum(len(set(found)) == 1 for found in answers.values())
    return (points / total if total else -1), agreeing / len(answers)


def pararel_group_score(results: dict) -> float:
    """``group_score_lama_eval``: subjects every pattern of which predicts the gold, over all
    subjects (no article rule)."""
    patterns = list(results)
    subjects = list(results[patterns[0]])
    right = sum(all(results[p][s][0] == results[p][s][1] for p in patterns) for s in subjects)
    return right / len(subjects)


RELATIONS = {
    # P1303's patterns: the last one alone has "a [Y]", so "organ" and "oboe" lose it, not the others
    "P1303": (
        ["[X] plays [Y] .", "[Y] player [X] ", "[X] plays the [Y] .", "[X] is a [Y] player."],
        {
            "Ann": ("guitar", ["guitar", "guitar", "guitar", "guitar"]),
            "Bob": ("organ", ["organ", "organ", "piano", "guitar"]),
            "Cid": ("piano", ["piano", "violin", "piano", "violin"]),
            "Dee": ("oboe", ["oboe", "oboe", "oboe", "piano"]),
            "Eve": ("violin", ["guitar", "violin", "violin", "violin"]),
        },
    ),
    # "a [Y]" and "an [Y]" patterns: every subject loses one or two, which ones by its object
    "P106": (
        ["[X] is a [Y] by profession .", "[X] is an [Y] by profession .", "[X] works as a [Y] .", "[X]'s job is [Y] ."],
        {
            "Fay": ("actor", ["actor", "actor", "painter", "actor"]),
            "Gus": ("painter", ["painter", "actor", "painter", "actor"]),
            "Hal": ("engineer", ["actor", "engineer", "engineer", "engineer"]),
            "Ida": ("lawyer", ["lawyer", "lawyer", "lawyer", "lawyer"]),
        },
    ),
    # prompts that never agree: consistency 0 (ParaRel's code then divides by zero in its
    # avg_consistency_by_edge_out, after the consistency is recorded)
    "P30": (
        ["[X] is located in [Y] .", "[X] is part of the continent of [Y] ."],
        {
            "Jo": ("Europe", ["Europe", "Asia"]),
            "Kim": ("Asia", ["Africa", "Asia"]),
            "Lu": ("Africa", ["Europe", "Africa"]),
        },
    ),
}


def probe_table() -> pd.DataFrame:
    rows = []
    for relation, (patterns, subjects) in RELATIONS.items():
        for p, pattern in enumerate(patterns):
            for f, (subject, (gold, answers)) in enumerate(subjects.items()):
                rows.append(
                    {
                        "relation": relation,
                        "fact_id": f"{relation}-{f}",
                        "sub_label": subject,
                        "obj_label": gold,
                        "obj_token_id": f,
                        "prompt_id": p,
                        "template": pattern,
                        "source": "pararel",
                        "rank": p,
                        "prediction": answers[p],
                        "gold_rank": 0 if answers[p] == gold else 1,
                    }
                )
    return pd.DataFrame(rows)


def pararel_per_relation() -> pd.DataFrame:
    rows = []
    for relation, (patterns, subjects) in RELATIONS.items():
        results = {
            p: {s: (answers[i], gold) for s, (gold, answers) in subjects.items()} for i, p in enumerate(patterns)
        }
        found, agreeing = pararel_analyze(results)
        rows.append(
            {
                "relation": relation,
                "consistency": found,
                "all_agree": agreeing,
                "consistent_accuracy": pararel_group_score(results),
            }
        )
    return pd.DataFrame(rows).sort_values("relation", ignore_index=True)


def test_the_default_reading_is_pararels_code_per_relation_and_over_relations():
    oracle = pararel_per_relation()
    total, per = consistency.prompt_set_consistency(probe_table())
    per = per.sort_values("relation", ignore_index=True)
    assert per["relation"].tolist() == oracle["relation"].tolist()
    for column in ("consistency", "consistent_accuracy", "all_agree"):
        assert per[column].to_numpy() == pytest.approx(oracle[column].to_numpy()), column
        assert getattr(total, column) == pytest.approx(oracle[column].mean()), column
    # the relation whose prompts never agree: consistency 0, no division by zero
    assert per.set_index("relation").loc["P30", "consistency"] == 0


def test_the_per_subject_reading_differs_from_pararels_code_here():
    """Averaging per subject first, and judging consistent accuracy on kept prompts only (the
    reading knowprobe had), moves both measures on these subjects, who lose different patterns."""
    oracle = pararel_per_relation()
    total, per = consistency.prompt_set_consistency(probe_table(), reading="per_subject")
    per = per.set_index("relation")
    # by hand, P1303: Ann 12/12, Bob 2/6 (kept 3: organ organ piano), Cid 4/12, Dee 6/6, Eve 6/12
    assert per.loc["P1303", "consistency"] == pytest.approx(np.mean([1, 2 / 6, 4 / 12, 1, 6 / 12]))
    assert per.loc["P1303", "consistency"] != pytest.approx(oracle.set_index("relation").loc["P1303", "consistency"])
    # consistent accuracy on kept prompts: Dee (oboe) is right wherever "a [Y]" is skipped
    assert per.loc["P1303", "consistent_accuracy"] == pytest.approx(2 / 5)
    assert oracle.set_index("relation").loc["P1303", "consistent_accuracy"] == pytest.approx(1 / 5)
    assert total.reading == "per_subject" and total.consistency != pytest.approx(oracle["consistency"].mean())


def test_intervals_of_the_consistency_measures():
    from knowprobe import uncertainty

    table = pd.concat([probe_table().assign(relation=lambda t, i=i: t["relation"] + f"-{i}") for i in range(5)])
    total, _ = consistency.prompt_set_consistency(table)
    found = consistency.consistency_intervals(table, uncertainty.Settings(bootstrap=300))
    assert found["consistency"].value == pytest.approx(total.consistency)
    assert found["consistent_accuracy"].value == pytest.approx(total.consistent_accuracy)
    for interval in found.values():
        assert interval.low <= interval.value <= interval.high and interval.clusters == 15
