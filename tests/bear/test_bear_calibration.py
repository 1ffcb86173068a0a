"""BEAR's calibration over its answer spaces (knowprobe.bear.calibration), against a plain
recomputation: softmax over each instance's candidates' scores, ECE, Brier and the prior's KL."""

import numpy as np
import pandas as pd
import pytest

from knowprobe import uncertainty
from knowprobe.bear import calibration, metrics
from knowprobe.uncertainty.calibration import ece


def test_calibration_over_the_answer_spaces_by_a_plain_recomputation():
    rng = np.random.default_rng(0)
    rows, instances = [], []
    for r in range(6):
        space = 3 + r  # answer spaces of different sizes
        for i in range(25):
            gold = int(rng.integers(0, space))
            instances.append({"relation": f"P{r}", "instance": f"Q{r}-{i}", "answer_idx": gold})
            for template in range(2):
                scores = rng.normal(size=space) * 2 + 2.5 * (np.arange(space) == gold)
                rows += [
                    {
                        "model": "m",
                        "relation": f"P{r}",
                        "template": template,
                        "instance": f"Q{r}-{i}",
                        "candidate": c,
                        "score": s,
                    }
                    for c, s in enumerate(scores)
                ]
    scores, instances = pd.DataFrame(rows), pd.DataFrame(instances)
    predicted = metrics.predictions(scores, instances)
    table = calibration.calibration_table(scores, predicted, 10, uncertainty.Settings(bootstrap=300))
    assert table["template"].tolist() == [0, 1] and (table["instances"] == 150).all()
    row = table[table["template"] == 1].iloc[0]
    mine = scores[scores["template"] == 1]
    confidence, right, brier, kl = [], [], [], []
    for _relation, part in mine.groupby("relation"):
        matrix = part.pivot(index="instance", columns="candidate", values="score")
        p = np.exp(matrix.to_numpy()) / np.exp(matrix.to_numpy()).sum(axis=1, keepdims=True)
        gold = instances.set_index("instance").loc[matrix.index, "answer_idx"].to_numpy()
        confidence += list(p.max(axis=1))
        right += list(p.argmax(axis=1) == gold)
        brier += list(((p - np.eye(p.shape[1])[gold]) ** 2).sum(axis=1))
        share = np.bincount(gold, minlength=p.shape[1]) / len(gold)
        kl.append(sum(s * np.log(s / q) for s, q in zip(share, p.mean(axis=0)) if s > 0))
    assert row["accuracy"] == pytest.approx(100 * np.mean(right))
    assert row["ece"] == pytest.approx(100 * ece(confidence, right, 10))
    assert row["brier"] == pytest.approx(np.mean(brier)) and row["prior_kl"] == pytest.approx(np.mean(kl))
    for measure in calibration.MEASURES:
        assert row[f"{measure}_low"] <= row[measure] <= row[f"{measure}_high"], measure
    assert "[" in calibration.layout(table).loc[0, "ece"]
