"""LPAQA's paper tables: our numbers beside the paper's, with the difference, in the paper's layout."""

import pandas as pd

from knowprobe.lpaqa import paper

from conftest import ROOT

NUMBERS = paper.load(ROOT / "resources/papers/lpaqa.yaml")


def results(model, values):
    """Two relations per (set, method), their mean being ``values[(set, method)]`` percent."""
    rows = []
    for (prompt_set, method), percent in values.items():
        for relation, shift in [("P17", -0.1), ("P19", 0.1)]:
            micro = percent / 100 + shift
            rows.append(
                dict(
                    model=model,
                    prompt_set=prompt_set,
                    method=method,
                    dataset="trex",
                    split="test",
                    relation=relation,
                    n_facts=10,
                    micro=micro,
                    macro=micro,
                )
            )
    return pd.DataFrame(rows)


def test_table2_puts_ours_beside_the_papers_numbers_for_the_model_it_ran():
    ours = results("bert", {("manual", "Top1"): 30.0, ("mine", "Opti"): 40.0, ("mine", "Top1"): 31.4})
    majority = results("bert", {("-", "Majority"): 20.0})
    table = paper.table2_3(
        ours, majority, NUMBERS, {"bert": "bert-base-cased", "tiny": None}, "micro", vocab_sizes={"bert": 21018}
    )
    bert = table[table["model"] == "bert"].set_index(["prompts", "method"])
    # issue 55: each row says what it is over, the facts and the candidate set's size (none for Majority)
    assert bert.loc[("Man", "Top1"), ["facts", "candidates"]].tolist() == [20, 21018]
    assert bert.loc[("Majority", "Top1"), "facts"] == 20 and pd.isna(bert.loc[("Majority", "Top1"), "candidates"])
    assert bert.loc[("Man", "Top1"), ["ours", "paper", "difference"]].tolist() == [30.0, 31.1, -1.1]
    assert bert.loc[("Mine", "Opti"), ["ours", "paper", "difference"]].tolist() == [40.0, 38.9, 1.1]
    assert bert.loc[("Mine", "Top1"), "difference"] == 0.0
    assert bert.loc[("Majority", "Top1"), ["ours", "paper"]].tolist() == [20.0, 22.0]
    # the paper's other model is shown with its numbers alone
    large = table[table["model"] == "bert-large-cased (paper only)"].set_index(["prompts", "method"])
    assert large["ours"].isna().all() and large.loc[("Mine+Man", "Opti"), "paper"] == 43.9
    wide = paper.extent_grid(table, ["model", "prompts"], "method")
    row = wide[(wide["model"] == "bert") & (wide["prompts"] == "Mine")].iloc[0]
    assert row["Opti"] == "40.0 (38.9, +1.1)" and row["Top3"] == "– (34.2)"  # the paper has it, we do not
    assert row["facts"] == "20" and row["candidates"] == "21,018"
    assert wide.columns.tolist()[:4] == ["model", "prompts", "facts", "candidates"]
    # the paper's models, which we did not run, keep their rows, over nothing of ours
    assert (wide.loc[wide["model"] == "bert-large-cased (paper only)", "facts"] == "–").all()


def test_a_model_the_paper_did_not_run_gets_our_numbers_alone():
    ours = results("tiny", {("manual", "Top1"): 12.5})
    table = paper.table2_3(ours, results("tiny", {("-", "Majority"): 5.0}), NUMBERS, {"tiny": None}, "macro")
    tiny = table[table["model"] == "tiny"].set_index(["prompts", "method"])
    assert tiny.loc[("Man", "Top1"), "ours"] == 12.5 and tiny["paper"].isna().all()
    assert set(table["model"]) == {"tiny", "bert-base-cased (paper only)", "bert-large-cased (paper only)"}
    base = table[table["model"] == "bert-base-cased (paper only)"].set_index(["prompts", "method"])
    assert base.loc[("Man", "Top1"), "paper"] == 22.8  # Table 3, macro
