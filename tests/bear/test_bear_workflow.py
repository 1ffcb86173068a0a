"""BEAR's slice end to end on the embedded demo (the shared ``demo`` run): the demo's BEAR-format
set imported with nothing left out, every statement of every model scored, every table and the
figure written, the numbers consistent with the scores and the set."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from knowprobe.bear import dataset, metrics, probe

from conftest import ROOT, copy_demo

pytestmark = pytest.mark.workflow
RESULTS = "results/bear"
MODELS = ["tiny-demo-bert", "tiny-demo-bert-small", "tiny-demo-gpt"]


def test_the_demo_set_is_imported_whole_and_every_statement_scored(demo):
    relations = pd.read_parquet(demo / RESULTS / "dataset/relations.parquet")
    instances = pd.read_parquet(demo / RESULTS / "dataset/instances.parquet")
    assert pd.read_csv(demo / RESULTS / "dataset/rejects.csv").empty
    expected, _, _ = dataset.read_dataset(ROOT / "resources/demo/bear")
    assert list(relations["relation"]) == list(expected["relation"]) and len(instances) == 114
    for model in MODELS:
        scores = pd.read_parquet(demo / RESULTS / f"scores/{model}.parquet")
        assert len(scores) == probe.cost(relations, instances) and scores["score"].lt(0).all()
        info = json.loads((demo / RESULTS / f"scores/{model}.json").read_text())
        assert info["kind"] == ("causal" if model == "tiny-demo-gpt" else "masked")


def test_the_tables_agree_with_the_scores(demo):
    instances = pd.read_parquet(demo / RESULTS / "dataset/instances.parquet")
    relations = pd.read_parquet(demo / RESULTS / "dataset/relations.parquet")
    accuracy = pd.read_csv(demo / RESULTS / "tables/accuracy.csv").set_index("model")
    assert list(accuracy.index) == MODELS
    for model in MODELS:
        scores = pd.read_parquet(demo / RESULTS / f"scores/{model}.parquet")
        predicted = metrics.predictions(scores, instances, "first")
        for template in range(3):
            share = 100 * predicted.loc[predicted["template"] == template, "correct"].mean()
            assert accuracy.loc[model, f"template_{template + 1}"] == pytest.approx(share)
    assert accuracy["random_baseline"].iloc[0] == pytest.approx(metrics.random_baseline(instances, relations))
    assert accuracy["leaderboard_mean"].isna().all()  # no demo model is on the leaderboard
    # the tiny GPT's start token, as its probe recorded it (docs/scoring.md, "The start token")
    assert set(accuracy["score"]) == {
        "PLL within_word_l2r",
        "statement log-prob after the start token [CLS] (auto: the tokenizer's BOS)",
    }
    domains = pd.read_csv(demo / RESULTS / "tables/domains.csv")
    assert set(domains["domain"]) == {"Geographic", "Biographical", "Historical"}
    md = (demo / RESULTS / "tables/accuracy.md").read_text()
    assert "random baseline" in md and "ties: first" in md
    for name in ["accuracy", "relations", "domains"]:
        for fmt in ["md", "csv", "tex", "html"]:
            assert (demo / RESULTS / f"tables/{name}.{fmt}").stat().st_size > 100, (name, fmt)
    png = demo / RESULTS / "figures/accuracy_parameters.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    assert (demo / RESULTS / "figures/accuracy_parameters.svg").stat().st_size > 10_000
    assert "0 defects" in (demo / "logs/bear/figures.log").read_text()


def test_the_domains_rerun_only_the_tables(demo, tmp_path):
    """Issue 54: changing only bear.relation_info (the domains) reran the import and every
    model's scoring, which domains do not touch; only the tables (and what shows them) rerun."""

    import yaml

    from conftest import snakemake

    project = tmp_path / "project"
    copy_demo(demo, project)
    info = json.loads((project / "resources/demo/bear/relation_info.json").read_text())
    info["P36"]["domains"] = ["Political"]
    (project / "other_info.json").write_text(json.dumps(info))
    config = yaml.safe_load((project / "resources/demo/config.yaml").read_text())
    config["bear"]["relation_info"]["path"] = "other_info.json"
    (project / "domains.yaml").write_text(yaml.safe_dump(config))
    result = snakemake(project, "-n", "--configfile", "domains.yaml")
    planned = {line.split()[0]: int(line.split()[1]) for line in result.stdout.splitlines() if line[:5] == "bear_"}
    assert planned == {"bear_tables": 1, "bear_figures": 1, "bear_intervals_figure": 1}
    assert "table_html" in result.stdout and "bear_probe" not in result.stdout and "bear_import" not in result.stdout
