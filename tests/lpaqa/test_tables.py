import pandas as pd
import pytest

from knowprobe import tables as render
from knowprobe.io import KnowprobeError
from knowprobe.lpaqa import tables


def per_relation():
    rows = []
    for model in ["m"]:
        for method, scores in [("Man", (0.5, 0.25, 1.0, 0.5)), ("Majority", (0.2, 0.1, 0.4, 0.3))]:
            rows += [
                dict(
                    model=model,
                    prompt_set="manual",
                    method=method,
                    dataset="trex",
                    relation="P1",
                    n_facts=4,
                    n_objects=2,
                    micro=scores[0],
                    macro=scores[1],
                ),
                dict(
                    model=model,
                    prompt_set="manual",
                    method=method,
                    dataset="trex",
                    relation="P2",
                    n_facts=2,
                    n_objects=1,
                    micro=scores[2],
                    macro=scores[3],
                ),
                dict(
                    model=model,
                    prompt_set="manual",
                    method=method,
                    dataset="google_re",
                    relation="g",
                    n_facts=3,
                    n_objects=3,
                    micro=scores[0],
                    macro=scores[0],
                ),
            ]
    return pd.DataFrame(rows)


def test_summary_in_percent_with_majority_first_and_trex_first():
    summary = tables.summary(per_relation())
    assert summary["method"].tolist() == ["Majority", "Man"]
    man = summary.set_index("method").loc["Man"]
    assert man["T-REx micro"] == 75.0 and man["T-REx macro"] == 37.5 and man["Google-RE micro"] == 50.0
    assert man["T-REx relations"] == 2 and man["T-REx facts"] == 6
    assert tables.score_columns(summary)[:2] == ["T-REx micro", "T-REx macro"]


def test_markdown_and_latex():
    summary = tables.summary(per_relation())
    columns = ["model", "method", *tables.score_columns(summary)]
    markdown = render.to_markdown(summary, columns).splitlines()
    assert markdown[0] == "| model | method | T-REx micro | T-REx macro | Google-RE micro | Google-RE macro |"
    assert markdown[3] == "| m | Man | 75.0 | 37.5 | 50.0 | 50.0 |"
    latex = render.to_latex(summary, columns, caption="P@1")
    assert r"m & Man & 75.0 & 37.5 & 50.0 & 50.0 \\" in latex and r"\caption{P@1}" in latex


def test_single_prompt_method_refuses_several_prompts():
    frame = pd.DataFrame({"relation": ["P1", "P1"], "prompt_id": [0, 1], "template": ["a", "b"], "micro": [0, 1]})
    with pytest.raises(KnowprobeError, match="relation P1 has 2 prompts"):
        tables.single_prompt_results(frame, "Man")


def test_score_summary_lays_every_run_side_by_side():
    from knowprobe.lpaqa.tables import score_summary

    def rows(run, prompt_set, method, micro, dataset="trex"):
        return [
            dict(
                model=run,
                prompt_set=prompt_set,
                method=method,
                dataset=dataset,
                split=split,
                relation=r,
                n_facts=10,
                n_objects=3,
                micro=micro,
                macro=micro / 2,
            )
            for r in ("P1", "P2")
            for split in ("test", "dev")
        ]

    results = pd.DataFrame(
        rows("gpt@next_token", "manual", "Opti", 0.4)
        + rows("gpt@next_token", "manual", "Top1", 0.3)
        + rows("gpt@next_token", "manual", "Top1-linear", 0.9)  # not a method of this table
        + rows("gpt@next_token", "-", "Majority", 0.2)
        + rows("bert", "manual", "Top1", 0.5)
        + rows("bert", "manual", "Top1", 0.25, dataset="google_re")
    )
    runs = {"bert": ("bert", "mask"), "gpt@next_token": ("gpt", "next_token")}
    table = score_summary(results, runs)
    assert table[["run", "score", "prompt_set", "method"]].values.tolist() == [
        ["bert", "mask", "manual", "Top1"],
        ["gpt@next_token", "next_token", "-", "Majority"],
        ["gpt@next_token", "next_token", "manual", "Top1"],
        ["gpt@next_token", "next_token", "manual", "Opti"],
    ]
    assert table["T-REx micro"].tolist() == [50.0, 20.0, 30.0, 40.0]
    assert table["Google-RE macro"].iloc[0] == 12.5 and table["T-REx facts"].iloc[0] == 20


def test_each_row_says_the_facts_and_the_candidate_set_it_is_over():
    """Issue 55: 89.5 over 19 facts and 49,149 candidates sat beside 100.0 over 20 facts and 20
    candidates as if the two were comparable."""
    rows = per_relation()
    runs = {"m": ("m", "mask"), "m@statement": ("m", "statement")}
    statement = rows[rows["model"] == "m"].assign(model="m@statement")
    rows = pd.concat([rows, statement], ignore_index=True)
    sizes = tables.candidate_set_sizes(rows, runs, {"m": 21018, "m@statement": 7}, {"g": ["a", "b", "c", "d"]})
    by_row = rows.assign(candidates=sizes)
    assert by_row.loc[(by_row["model"] == "m") & (by_row["method"] == "Man"), "candidates"].unique().tolist() == [21018]
    man = by_row[(by_row["model"] == "m@statement") & (by_row["method"] == "Man")].set_index("relation")
    # C_r: a relation's distinct gold objects, or its declared answer space
    assert man["candidates"].to_dict() == {**man["n_objects"].drop("g").astype(float).to_dict(), "g": 4.0}
    assert by_row.loc[by_row["method"] == "Majority", "candidates"].isna().all()  # Majority ranks nothing
    summary = tables.summary(by_row)
    assert "T-REx candidates" in summary and summary["T-REx candidates"].dtype == "Int64"
    mask = summary[(summary["model"] == "m") & (summary["method"] == "Man")].iloc[0]
    assert mask["T-REx candidates"] == 21018 and mask["T-REx facts"] == 6
    assert tables.shown_columns(summary)[:4] == ["T-REx micro", "T-REx macro", "T-REx facts", "T-REx candidates"]
    markdown = render.to_markdown(summary, ["model", "method", *tables.shown_columns(summary)])
    assert "| m | Majority | " in markdown and " | 6 | – |" in markdown  # Majority: no candidate set


def test_the_baseline_heads_the_report_where_no_interval_could_be_computed():
    """Issue 55: a run without T-REx-train has no interval table, and its report's landing page
    had no number: the baseline's headline gives the manual prompts beside Majority, over what."""
    rows = per_relation()
    rows["candidates"] = tables.candidate_set_sizes(rows, {"m": ("m", "mask")}, {"m": 30})
    [line] = tables.headlines(tables.summary(rows))
    assert line.startswith("m: manual prompts 75.0 (Majority ")
    assert line.endswith("micro P@1 (%) over 6 T-REx facts, 30 candidates; no interval")


def test_a_cells_own_bar_splits_no_markdown_column_and_reads_back():
    """A start token such as <|endoftext|> in a cell (LPAQA's scores table names it)."""
    from knowprobe.tables import read_markdown, to_markdown

    frame = pd.DataFrame({"run": ["gpt2@next_token"], "start token": ["<|endoftext|> (auto: the document separator)"]})
    text = to_markdown(frame)
    assert text.splitlines()[2] == r"| gpt2@next_token | <\|endoftext\|> (auto: the document separator) |"
    _, back = read_markdown(text)
    assert back.to_dict("records") == frame.to_dict("records")
