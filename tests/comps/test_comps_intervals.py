"""COMPS's accuracy with its interval over properties, and model comparisons."""

import numpy as np
import pandas as pd
import pytest

from knowprobe import uncertainty
from knowprobe.comps import intervals, tables


def pairs(seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for model, shift in [("big", 1.0), ("small", 0.0)]:
        for i in range(120):
            rows.append(
                {
                    "model": model,
                    "subset": "base",
                    "id": i,
                    "property": f"p{i % 12}",
                    "acceptable_score": rng.normal(shift),
                    "unacceptable_score": rng.normal(),
                }
            )
    return pd.DataFrame(rows)


def test_accuracy_is_the_tables_with_an_interval_over_properties():
    scored = pairs()
    table = intervals.interval_table(intervals.items(scored), uncertainty.Settings(bootstrap=400))
    accuracy = tables.by_subset(scored.assign(negative_sample_type="random"))
    for row in table.itertuples():
        expected = accuracy[accuracy["model"] == row.model]["accuracy"].iloc[0]
        assert row.accuracy == pytest.approx(expected) and row.low < row.accuracy < row.high
        assert (row.properties, row.pairs) == (12, 120)
    assert intervals.headlines(table)[0].startswith("big: COMPS-BASE ")


def test_each_model_against_the_next():
    items = intervals.items(pairs())
    chosen = intervals.default_comparisons(items, {"model_pairs": None}, ["big", "small"])
    assert chosen == [(("big", "base"), ("small", "base"))]
    summary, tests = intervals.comparisons(items, chosen, uncertainty.Settings(bootstrap=400))
    row = summary.iloc[0]
    assert row["subset"] == "COMPS-BASE" and row["pairs"] == 120 and row["difference"] > 0
    assert row["A better"] + row["no difference"] + row["B better"] == 12 == len(tests)


def test_the_figure_draws_each_subsets_accuracy_with_its_bounds_and_no_bar_without_an_interval():
    table = pd.DataFrame(
        {
            "model": ["big", "big", "small", "small"],
            "subset": ["base", "wugs", "base", "wugs"],
            "accuracy": [70.0, 60.0, 55.0, 52.0],
            "low": [65.0, np.nan, 50.0, np.nan],
            "high": [74.0, np.nan, 61.0, np.nan],
        }
    )
    models, values, errors = intervals.figure_bars(table)
    assert models == ["big", "small"]
    assert list(values) == ["COMPS-BASE", "COMPS-WUGS"]
    assert values["COMPS-BASE"].tolist() == [70.0, 55.0]
    assert errors["COMPS-BASE"][0].tolist() == [65.0, 50.0] and errors["COMPS-BASE"][1].tolist() == [74.0, 61.0]
    assert np.isnan(errors["COMPS-WUGS"][0]).all()
