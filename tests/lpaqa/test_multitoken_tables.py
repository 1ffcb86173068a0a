"""The multi-token tables' intervals and paired comparisons (knowprobe.lpaqa.multitoken_tables):
each statistic's interval around its value, methods and models compared on the same facts (a
method against itself: zero; McNemar's counts by hand)."""

import numpy as np
import pandas as pd
import pytest

from knowprobe import uncertainty
from knowprobe.lpaqa import multitoken_tables


def selected(rng, model: str, methods: dict[str, float]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Predictions and selection of one model: 6 relations of 20 test facts, one template each,
    each method right with its own rate; ``independent`` right exactly where ``statement`` is,
    except on relation P0's first five facts, where only ``statement`` is."""
    facts = pd.DataFrame(
        {
            "relation": np.repeat([f"P{r}" for r in range(6)], 20),
            "fact_id": [f"f{i}" for i in range(120)],
            "obj_tokens": np.tile([1, 2, 3, 4, 5], 24),
        }
    )
    frames, right = [], {}
    for method, rate in methods.items():
        right[method] = rng.random(len(facts)) < rate
    if "independent" in right:
        right["independent"] = right["statement"].copy()
        right["independent"][:5] = False
        right["statement"][:5] = True
    for method in methods:
        frames.append(
            facts.assign(
                split="test",
                template="t",
                method=method,
                definition="d",
                correct_exact=right[method],
                correct_substring=right[method],
            )
        )
    predictions = pd.concat(frames, ignore_index=True)
    selection = pd.DataFrame(
        [(s, m, f"P{r}", "t") for s in ["manual"] for m in methods for r in range(6)],
        columns=["prompt_set", "method", "relation", "template"],
    )
    return predictions, selection


def test_intervals_and_comparisons_of_methods_and_models():
    rng = np.random.default_rng(0)
    settings = uncertainty.Settings(bootstrap=400)
    tables, rows = [], []
    for model, methods in [("bert", {"statement": 0.6, "mlama": 0.4, "independent": 0}), ("gpt", {"statement": 0.3})]:
        predictions, selection = selected(rng, model, methods)
        tables.append(multitoken_tables.accuracy(predictions, selection, model, "masked"))
        rows.append(multitoken_tables.selected_rows(predictions, selection).assign(model=model))
    rows = pd.concat(rows, ignore_index=True)
    table, shared = multitoken_tables.with_intervals(pd.concat(tables, ignore_index=True), rows, settings)
    every = table[table["tokens"] == "all"]
    for column in ("macro_exact", "micro_exact", "macro_substring", "micro_substring"):
        assert (every[f"{column}_low"] <= every[column]).all() and (every[column] <= every[f"{column}_high"]).all()
        assert (every[f"{column}_low"] < every[f"{column}_high"]).all()
    assert "[" in multitoken_tables.accuracy_layout(table).loc[0, "all"]

    pairs = multitoken_tables.method_pairs(table)
    assert (("bert", "statement", "manual"), ("bert", "mlama", "manual")) in pairs
    assert (("bert", "statement", "manual"), ("gpt", "statement", "manual")) in pairs
    summary, tests = multitoken_tables.comparisons(rows, [*pairs, (pairs[0][0], pairs[0][0])], settings, shared)
    summary = summary.set_index(["A", "B"])
    itself = summary.loc[("bert statement manual", "bert statement manual")]
    assert (itself["difference"], itself["low"], itself["high"]) == (0, 0, 0)
    # statement against independent: 5 discordant facts of P0, all for statement; none elsewhere
    row = summary.loc[("bert statement manual", "bert independent manual")]
    assert row["difference"] == pytest.approx(100 * 5 / 20 / 6)
    mine = tests[(tests["A"] == "bert statement manual") & (tests["B"] == "bert independent manual")]
    assert mine.set_index("relation")[["b", "c"]].loc["P0"].tolist() == [5, 0]
    assert (mine.set_index("relation")[["b", "c"]].drop("P0").to_numpy() == 0).all()
    # the same pair without the shared replicates: resampled on its own, the same value and McNemar
    alone, alone_tests = multitoken_tables.comparisons(rows, pairs[:1], settings)
    first = summary.loc[(alone["A"].iat[0], alone["B"].iat[0])]
    assert alone["difference"].iat[0] == pytest.approx(first["difference"])
    assert alone_tests["p_holm"].tolist() == pytest.approx(
        tests[(tests["A"] == alone["A"].iat[0]) & (tests["B"] == alone["B"].iat[0])]["p_holm"].tolist()
    )
