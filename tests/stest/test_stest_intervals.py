"""S-TEST's p_r with its interval and paired comparisons."""

import numpy as np
import pandas as pd
import pytest

from knowprobe import uncertainty
from knowprobe.stest import intervals, metrics


def scores(seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for method in ("VP", "FP"):
        for r in range(5):
            for s in range(30):
                rows.append(
                    {
                        "model": "m",
                        "relation": f"P{r}",
                        "sub_uri": f"Q{s}",
                        "measure": "specificity",
                        "method": method,
                        "mode": "mask",
                        "query": "",
                        "fine_score": rng.normal(0.3 if method == "FP" else 0),
                        "coarse_score": rng.normal(),
                        "fine_in_vocab": s != 0,
                        "coarse_in_vocab": True,
                    }
                )
    return pd.DataFrame(rows)


def test_p_r_average_with_its_interval():
    frame = scores()
    table = intervals.interval_table(intervals.items(frame), uncertainty.Settings(bootstrap=400))
    average = metrics.p_r(frame)
    expected = average[(average["relation"] == "Average") & (average["method"] == "VP")]["p_r"].iloc[0]
    row = table[table["method"] == "VP"].iloc[0]
    assert row["p_r"] == pytest.approx(expected) and row["triples"] == 5 * 29 and row["relations"] == 5
    assert row["low"] < row["p_r"] < row["high"]
    assert (
        intervals.headlines(table)[0].startswith("m: p_r ")
        and "5 relations, 95% interval" in intervals.headlines(table)[0]
    )


def test_methods_against_vanilla_on_the_same_triples():
    triples = intervals.items(scores())
    config = {"baseline": "VP", "methods": ["FP", "CP"], "model_pairs": None}
    pairs = intervals.default_comparisons(triples, config, ["m"])
    assert pairs == [(("m", "specificity", "FP", "mask"), ("m", "specificity", "VP", "mask"))]
    summary, tests = intervals.comparisons(triples, pairs, uncertainty.Settings(bootstrap=400))
    assert summary.iloc[0]["triples"] == 5 * 29 and len(tests) == 5


def test_the_figure_panel_has_a_group_per_model_and_mode_and_a_bar_per_method():
    table = pd.DataFrame(
        {
            "model": ["bert", "bert", "gpt2", "gpt2", "bert"],
            "measure": ["specificity"] * 4 + ["naturalness"],
            "method": ["VP", "FP", "VP", "FP", "VP"],
            "mode": ["mask", "mask", "next_token", "next_token", "mask"],
            "p_r": [60.0, 64.0, 55.0, 58.0, 70.0],
            "low": [55.0, 59.0, np.nan, np.nan, 65.0],
            "high": [66.0, 69.0, np.nan, np.nan, 75.0],
        }
    )
    categories, values, errors = intervals.figure_bars(table, "specificity")
    assert categories == ["bert (mask)", "gpt2 (next_token)"]
    assert values["FP"].tolist() == [64.0, 58.0]
    assert errors["VP"][0][0] == 55.0 and errors["VP"][1][0] == 66.0 and np.isnan(errors["VP"][0][1])
    assert intervals.figure_bars(table, "naturalness")[0] == ["bert (mask)"]
