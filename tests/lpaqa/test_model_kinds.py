"""Issue 52, item 1: LPAQA with the models it is given. Causal models only, or masked ones only:
what needs a masked model's mask-score predictions is left out with one line at the start, and
every other number of every run is made (dry runs of the demo's LPAQA; one small real run)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import ROOT, copy_project, executed_rules, snakemake

pytestmark = pytest.mark.workflow
LEFT_OUT = "knowprobe: LPAQA leaves out, as no LPAQA run has a masked model under the mask score"
MASK_ONLY_RULES = {
    "lpaqa_lama_uhn",
    "lpaqa_refine",
    "lpaqa_backward",
    "lpaqa_cross_model",
    "lpaqa_paper_tables",
    "lpaqa_paper_figures",
}


def lpaqa_config(project: Path, name: str, kind: str, edit=None) -> str:
    """The demo's config with LPAQA alone and only its models of ``kind``; its file name."""
    config = yaml.safe_load((project / "resources/demo/config.yaml").read_text())
    config["studies"] = ["lpaqa"]
    config["models"] = {model: entry for model, entry in config["models"].items() if entry["kind"] == kind}
    if edit:
        edit(config)
    (project / name).write_text(yaml.safe_dump(config))
    return name


def planned(result) -> dict[str, set[str]]:
    """The rules a dry run plans, each with the runs ({model}) its jobs have ("" for none)."""
    jobs: dict[str, set[str]] = {}
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", result.stdout):
        rule = re.match(r"(?:local)?rule (\w+):", block)
        if rule:
            model = re.search(r"wildcards: .*?\bmodel=([^,\s]+)", block)
            jobs.setdefault(rule.group(1), set()).add(model.group(1) if model else "")
    return jobs


def left_out_lines(result) -> list[str]:
    return [line for line in (result.stdout + result.stderr).splitlines() if line.startswith(LEFT_OUT)]


def test_causal_models_alone_plan_every_number_but_the_mask_parts(tmp_path):
    """Every prompt set of the demo, the tiny GPT under next_token and statement: the selection
    (Top-1, Top-K, Opti, Oracle), intervals and consistency of both runs, Mine+Para seeded by the
    first run; no job of a part that needs a masked model, and one line that says which and why."""
    project = copy_project(tmp_path)
    result = snakemake(project, "lpaqa", "-n", "--configfile", lpaqa_config(project, "causal.yaml", "causal"))
    [line] = left_out_lines(result)
    for part in ("LAMA-UHN, Table 9", "the prompt set refined, Table 14", "backward features, Table 15"):
        assert part in line
    assert "the paper's Tables 1-15 and Figures 2-5" in line and "calibration" not in line  # every run's
    assert line in (ROOT / "docs/lpaqa.md").read_text(encoding="utf-8"), "docs/lpaqa.md quotes the line"
    jobs = planned(result)
    runs = {"tiny-demo-gpt@next_token", "tiny-demo-gpt@statement"}
    assert jobs["lpaqa_selection"] == runs and jobs["lpaqa_probe"] == runs
    assert {"lpaqa_intervals", "lpaqa_consistency", "lpaqa_score_tables", "lpaqa_tables"} <= set(jobs)
    assert not MASK_ONLY_RULES & set(jobs), MASK_ONLY_RULES & set(jobs)
    # refined is left out of the prompt sets: no run probes it
    assert "results/lpaqa/probe/tiny-demo-gpt@next_token/refined" not in result.stdout
    assert "results/lpaqa/probe/tiny-demo-gpt@next_token/mine_para" in result.stdout

    # a masked model named for LAMA-UHN's filter alone gives T-REx-UHN back
    def with_uhn_model(config):
        config["models"]["tiny-demo-bert"] = yaml.safe_load((project / "resources/demo/config.yaml").read_text())[
            "models"
        ]["tiny-demo-bert"]
        config["lpaqa"].update(models=["tiny-demo-gpt"], uhn={"model": "tiny-demo-bert"})

    named = lpaqa_config(project, "uhn.yaml", "causal", with_uhn_model)
    result = snakemake(project, "lpaqa", "-n", "--configfile", named)
    [line] = left_out_lines(result)
    assert "LAMA-UHN" not in line
    jobs = planned(result)
    assert "lpaqa_lama_uhn" in jobs and jobs["lpaqa_selection"] == runs


def test_masked_models_alone_leave_nothing_out(tmp_path):
    project = copy_project(tmp_path)
    result = snakemake(project, "lpaqa", "-n", "--configfile", lpaqa_config(project, "masked.yaml", "masked"))
    assert not left_out_lines(result)
    jobs = planned(result)
    assert MASK_ONLY_RULES <= set(jobs)
    assert jobs["lpaqa_selection"] == {"tiny-demo-bert", "tiny-demo-bert-small"}
    # under the statement score only there is no mask run; LAMA-UHN's filter runs a masked model
    # itself, so it stays, with the first one
    statement = lpaqa_config(
        project, "statement.yaml", "masked", lambda c: c["lpaqa"]["probe"].update(scores={"masked": ["statement"]})
    )
    result = snakemake(project, "lpaqa", "-n", "--configfile", statement)
    [line] = left_out_lines(result)
    assert "LAMA-UHN" not in line and "the prompt set refined, Table 14" in line
    jobs = planned(result)
    assert jobs["lpaqa_selection"] == {"tiny-demo-bert@statement", "tiny-demo-bert-small@statement"}
    assert "lpaqa_lama_uhn" in jobs and not {"lpaqa_refine", "lpaqa_paper_tables", "lpaqa_backward"} & set(jobs)


def test_a_causal_model_alone_gives_its_lpaqa_numbers(tmp_path):
    """One tiny GPT (a few training steps) under next_token on the demo's T-REx, with the manual
    prompts and the demo's stand-in of LPAQA's Man+Para (several prompts a relation, no mining):
    the baseline, the selection's every method, the scores, intervals, comparisons and
    consistency tables, all of that run; none of the paper's tables."""

    def small(config):
        config["models"]["tiny-demo-gpt"]["train"]["steps"] = 30
        config["lpaqa"].update(
            prompt_sets=["manual", "lpaqa_manual_paraphrase"], datasets=["trex"], multitoken={"enabled": False}
        )
        config["lpaqa"]["probe"]["scores"] = {"causal": ["next_token"]}

    project = copy_project(tmp_path)
    result = snakemake(project, "lpaqa", "--configfile", lpaqa_config(project, "causal.yaml", "causal", small))
    assert len(left_out_lines(result)) == 1
    assert not MASK_ONLY_RULES & executed_rules(result)
    run = "tiny-demo-gpt@next_token"
    tables = project / "results/lpaqa/tables"
    selection = pd.read_parquet(project / f"results/lpaqa/selection/{run}/lpaqa_manual_paraphrase/results.parquet")
    assert {"Top1", "Top2", "Top10", "Opti", "Oracle"} <= set(selection["method"])
    intervals = pd.read_csv(tables / "intervals.csv")
    assert set(intervals["model"]) == {run}
    assert {"Top1", "Top3", "Top5", "Opti", "Oracle"} <= set(intervals["method"])
    assert intervals["micro_low"].le(intervals["micro"]).all() and intervals["micro"].le(intervals["micro_high"]).all()
    comparisons = pd.read_csv(tables / "comparisons.csv")
    assert comparisons["A"].str.startswith(run).all() and len(comparisons) >= 3
    consistency = pd.read_csv(tables / "consistency.csv")
    assert set(consistency["model"]) == {run} and consistency["subjects"].gt(0).all()
    assert set(pd.read_csv(tables / "scores.csv")["run"]) == {run}
    assert pd.read_csv(tables / "baseline.csv")["model"].tolist() == [run, run]
    assert not (tables / "table1.md").exists()
    # calibration is every run's: the causal run's next-token distribution over the candidates
    calibration = pd.read_csv(tables / "calibration.csv")
    assert set(calibration["model"]) == {run} and calibration["ece"].notna().any()
    # the report's landing page says what was left out, as the run's first line did
    snakemake(project, "--report", "report.html", "--configfile", "causal.yaml")
    assert left_out_lines(result)[0].removeprefix("knowprobe: ") in (project / "report.html").read_text()
