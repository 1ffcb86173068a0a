"""One bad COMPS stimulus never stops a model's job (issue 44): a pair the model cannot score (a
property phrase longer than it takes, one without a token of its own for its tokenizer) is left
out for that model alone, its scores NaN and its reason in its row, counted by reason in the
job's log and in the accuracy tables' footnote; messages quote at most 80 characters of a text.
Before, such a pair stopped the model's whole probe ("input ... is 305 tokens long, more than
scoring.max_length=256", printing the whole text; "continuation '\\u200b' ... has no tokens")."""

import numpy as np
import pandas as pd
import pytest

from knowprobe.comps import metrics, probe, tables
from knowprobe.io import KnowprobeError
from knowprobe.scoring import CausalLM, MaskedLM, ScoringSettings

SETTINGS = ScoringSettings(device="cpu", dtype="float32", max_length=64)
LONG = " ".join(["is the capital of France"] * 60) + " ."  # 300 words


def stimuli() -> pd.DataFrame:
    phrases = ["is the capital of France .", LONG, "\u200b", "was born in Salzburg .", "is the capital of France ."]
    return pd.DataFrame(
        {
            "subset": ["base"] * 4 + ["wugs"],
            "id": [0, 1, 2, 3, 0],
            "prefix_acceptable": ["Paris", "Paris", "Paris", "Mozart", "A wug is Paris . Therefore , a wug"],
            "prefix_unacceptable": ["Berlin", "Berlin", "Berlin", "Paris", "A wug is Berlin . Therefore , a wug"],
            "property_phrase": phrases,
            "negative_sample_type": ["taxonomic", "overlap", "random", "taxonomic", "taxonomic"],
            "property": ["is the capital", "is long", "is empty", "was born", "is the capital"],
        }
    )


def check_left_out(scorer, expected: dict[int, str], caplog):
    pairs = stimuli()
    with caplog.at_level("WARNING"):
        reasons, examples = probe.left_out(scorer, pairs)
        counts = probe.log_left_out(reasons, examples, pairs)
    assert {i: r for i, r in enumerate(reasons) if r} == expected
    assert counts == {reason: list(expected.values()).count(reason) for reason in set(expected.values())}
    scores = probe.score(scorer, "m", pairs, reasons=reasons)
    kept = [i for i in range(len(pairs)) if i not in expected]
    alone = probe.score(scorer, "m", pairs.iloc[kept])
    assert scores.loc[kept, "left_out"].eq("").all() and alone["left_out"].eq("").all()
    np.testing.assert_allclose(scores.loc[kept, "acceptable_score"], alone["acceptable_score"], rtol=1e-6)
    assert scores.loc[list(expected), ["acceptable_score", "unacceptable_score"]].isna().all().all()
    # the log counts them and quotes no text whole: at most 80 characters of it
    assert f"{len(expected)} of 5 pairs left out for this model" in caplog.text
    assert (
        LONG not in caplog.text
        and ("Paris " + LONG)[:80] in caplog.text
        and f"({len('Paris ' + LONG):,} characters)" in caplog.text
    )
    return scores


def test_a_masked_model_leaves_out_a_too_long_or_tokenless_pair_and_scores_the_rest(
    tiny_bert, wordpiece_tokenizer, caplog
):
    scorer = MaskedLM(tiny_bert, wordpiece_tokenizer, SETTINGS)
    scores = check_left_out(scorer, {1: "too_long", 2: "no_tokens"}, caplog)
    assert "has no tokens to score" in caplog.text
    # the scorer itself still refuses them, in one line quoting at most 80 characters
    with pytest.raises(KnowprobeError, match=r"more than scoring.max_length=64") as error:
        scorer.conditional_logprob(["Paris"], [LONG])
    assert LONG not in str(error.value) and "characters)" in str(error.value)
    accuracy = metrics.accuracy(tables.scored(scores, stimuli()), ["model", "subset"])
    assert accuracy[["subset", "pairs", "left_out"]].values.tolist() == [["base", 2, 2], ["wugs", 1, 0]]


def test_a_causal_model_leaves_out_a_too_long_pair(tiny_causal_models, caplog):
    _, model, tokenizer = tiny_causal_models[0]
    scorer = CausalLM(model, tokenizer, SETTINGS, start_token=False)
    check_left_out(scorer, {1: "too_long"}, caplog)


def test_the_accuracy_tables_count_the_pairs_left_out_in_their_footnote():
    scores = pd.DataFrame(
        {
            "model": ["a", "a", "a", "b", "b"],
            "subset": ["base"] * 5,
            "id": [0, 1, 2, 0, 1],
            "acceptable_score": [1.0, np.nan, np.nan, 1.0, 0.0],
            "unacceptable_score": [0.0, np.nan, np.nan, 2.0, 1.0],
            "left_out": ["", "too_long", "no_tokens", "", ""],
        }
    )
    note = tables.left_out_note(scores)
    assert "a 2 (no_tokens 1, too_long 1)" in note and "b " not in note
    assert tables.left_out_note(scores.assign(left_out="").fillna(0.0)) == ""
    accuracy = metrics.accuracy(scores, ["model", "subset"])
    assert accuracy[["model", "pairs", "accuracy", "left_out"]].values.tolist() == [
        ["a", 1, 100.0, 2],
        ["b", 2, 0.0, 0],
    ]


def test_the_float32_recheck_passes_over_the_pairs_left_out():
    low = pd.DataFrame(
        {
            "model": "m",
            "subset": "base",
            "id": np.arange(6),
            "acceptable_score": [1.0, np.nan, 0.5, -1.0, 0.01, 2.0],
            "unacceptable_score": [0.0, np.nan, 0.0, 0.0, 0.0, 1.0],
            "left_out": ["", "too_long", "", "", "", ""],
        }
    )
    asked = []

    def rescore(rows):
        asked.extend(rows)
        return low.iloc[rows].assign(acceptable_score=low["acceptable_score"].iloc[rows] + 0.001)

    checked, report = probe.recheck(low, rescore, share=0.02, factor=4)
    assert 1 not in asked and report.groups == 5 and np.isfinite(report.error)
    assert np.isnan(checked.loc[1, "acceptable_score"])
