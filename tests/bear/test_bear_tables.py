"""BEAR's tables: the leaderboard's numbers beside ours for the models it lists (by name or hub
id), the difference, the random baseline row, the per-relation and per-domain layouts."""

from __future__ import annotations

import pandas as pd
import pytest

from knowprobe.bear import metrics, tables
from knowprobe.tables import load_paper

from conftest import ROOT

PAPER = load_paper(ROOT / "resources/papers/bear.yaml")


def predicted():
    """Two models, one relation, three templates, four instances: "mine" right on 3, 2, 1 of
    them, "b" on 1, 1, 1."""
    rows = []
    for model, right in [("mine", [3, 2, 1]), ("b", [1, 1, 1])]:
        for template, n in enumerate(right):
            for instance in range(4):
                rows.append(
                    {
                        "model": model,
                        "relation": "P1",
                        "template": template,
                        "instance": instance,
                        "correct": instance < n,
                    }
                )
    return pd.DataFrame(rows)


def test_the_leaderboard_beside_ours():
    models = pd.DataFrame(
        {
            "model": ["mine", "b"],
            "kind": ["masked", "causal"],
            "family": ["bert", "gpt2"],
            "parameters": [108_000_000, 124_000_000],
            "hub_id": ["google-bert/bert-base-cased", None],
            "start_token": [None, "<|endoftext|> (auto: the document separator)"],
        }
    )
    settings = tables.model_settings(models, "within_word_l2r", False, "first")
    table = tables.accuracy(predicted(), models, PAPER, 1, settings).set_index("model")
    assert list(table.loc["mine", ["template_1", "template_2", "template_3"]]) == [75.0, 50.0, 25.0]
    assert table.loc["mine", "mean"] == 50.0 and table.loc["mine", "sem"] == pytest.approx(25 / 3**0.5)
    # matched by the hub id's last part: bert-base-cased, 18.39348079 on the leaderboard
    assert table.loc["mine", "leaderboard_mean"] == pytest.approx(18.39348079)
    assert table.loc["mine", "difference"] == pytest.approx(50.0 - 18.4)
    assert pd.isna(table.loc["b", "leaderboard_mean"]) and pd.isna(table.loc["b", "difference"])
    assert (
        table.loc["mine", "score"] == "PLL within_word_l2r"
        and table.loc["b", "score"]
        == "statement log-prob after the start token <|endoftext|> (auto: the document separator)"
    )
    layout = tables.accuracy_layout(table.reset_index(), 4.68244729, PAPER["dataset"]["random_baseline"])
    assert list(layout["BEAR (mean ± sem)"]) == ["50.0 ± 14.4", "25.0 ± 0.0", "4.7"]
    assert list(layout["leaderboard"]) == ["18.4 ± 0.4", "–", "4.7"]
    assert list(layout["difference"]) == ["+31.6", "–", "+0.0"]
    # the Markdown the report's page is rendered from reads back whole (no cell holds a "|")
    from knowprobe.tables import read_markdown, to_markdown

    _, back = read_markdown("caption\n\n" + to_markdown(layout))
    assert back.shape == layout.shape
    lines = tables.headlines(table.reset_index())
    assert lines[0] == "mine: BEAR 50.0 ± 14.4 (leaderboard 18.4), PLL within_word_l2r"


def test_the_leaderboard_file_holds_the_numbers_the_issue_quotes():
    board = PAPER["models"]
    assert round(board["bert-base-cased"]["mean"], 1) == 18.4 and round(board["gpt2"]["mean"], 1) == 13.5
    assert round(PAPER["dataset"]["random_baseline"], 2) == 4.68 and len(board) == 23
    assert {entry["kind"] for entry in board.values()} == {"masked", "causal"}
    assert all(isinstance(entry["parameters"], float) for entry in board.values())


def test_relation_and_domain_layouts():
    relations = pd.DataFrame(
        {"relation": ["P1"], "answer_space_labels": [["a", "b", "c"]], "domains": [["Arts", "Movies"]]}
    )
    models = pd.DataFrame({"model": ["mine", "b"], "kind": "masked", "family": "bert", "parameters": 1})
    settings = tables.model_settings(models, "original", True, "wrong")
    per_relation = tables.relations_table(predicted(), relations, settings)
    assert list(per_relation["template"].unique()) == [1, 2, 3] and set(per_relation["ties"]) == {"wrong"}
    layout = tables.relations_layout(per_relation, 1)
    assert layout.loc[0, "mine"] == "50.0 ± 14.4" and layout.loc[0, "answers"] == 3
    domains = tables.domains_table(predicted(), relations, settings, True)
    assert set(domains["domain"]) == {"Arts", "Movies"}
    assert list(tables.domains_layout(domains, 1)["mine"]) == ["50.0 ± 14.4"] * 2
    assert metrics.by_relation(predicted())["accuracy"].tolist() == [75.0, 50.0, 25.0, 25.0, 25.0, 25.0]


def test_no_domains_gives_every_table_without_domain_rows(tmp_path):
    """Issue 54: bear.relation_info.path: null ended bear_tables in KeyError: 'mean'."""
    from knowprobe.tables import write_table

    relations = tables.with_domains(pd.DataFrame({"relation": ["P1"], "answer_space_labels": [["a", "b", "c"]]}), {})
    assert list(relations["domains"]) == [[]]
    models = pd.DataFrame({"model": ["mine", "b"], "kind": "masked", "family": "bert", "parameters": 1})
    settings = tables.model_settings(models, "original", True, "first")
    domains = tables.domains_table(predicted(), relations, settings, True)
    assert domains.empty and list(domains.columns) == tables.DOMAIN_COLUMNS
    outputs = {f"domains_{fmt}": tmp_path / f"domains.{fmt}" for fmt in ("csv", "md", "tex")}
    write_table(outputs, "domains", domains, tables.domains_layout(domains, 1), "No domains.")
    assert pd.read_csv(outputs["domains_csv"]).empty and "No domains." in outputs["domains_md"].read_text()
    assert len(tables.relations_table(predicted(), relations, settings)) == 6
