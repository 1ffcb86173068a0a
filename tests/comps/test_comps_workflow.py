"""COMPS's slice end to end on the embedded demo (the shared ``demo`` run): the demo norms'
similarities, the builder's stimuli, the scores of a masked and a causal model, every table and
figure; the released files as a source; what a change of the builder's settings reruns."""

from __future__ import annotations

import json
import re
import shutil

import pandas as pd
import pytest
import yaml

from conftest import ROOT, copy_project, executed_rules, snakemake

pytestmark = pytest.mark.workflow
RESULTS = "results/comps"
MODELS = ["tiny-demo-bert", "tiny-demo-bert-small", "tiny-demo-gpt"]


def test_the_demo_norms_similarities_and_stimuli(demo):
    concepts = pd.read_parquet(demo / RESULTS / "norms/concepts.parquet").set_index("concept")
    assert concepts.loc["robin", "is_animal"] and not concepts.loc["table", "is_animal"]
    assert concepts.loc["guinea_pig", "has_vector"]  # the mean of "guinea" and "pig"
    similarity = pd.read_parquet(demo / RESULTS / "norms/similarity.parquet").set_index(["concept", "other"])
    # two birds are closer in the taxonomy than a bird and a dog, and than a bird and a table
    assert similarity.loc[("robin", "sparrow"), "taxonomic"] > similarity.loc[("robin", "dog"), "taxonomic"]
    assert similarity.loc[("robin", "dog"), "taxonomic"] > similarity.loc[("robin", "table"), "taxonomic"]
    stimuli = pd.read_parquet(demo / RESULTS / "stimuli/built.parquet")
    counts = stimuli["subset"].value_counts()
    assert counts["base"] > 300 and counts["wugs"] == counts["wugs_dist_before"] == counts["wugs_dist_in_between"]
    assert set(stimuli["negative_sample_type"]) == {"taxonomic", "overlap", "co-occurrence", "random"}
    # the counts docs/comps.md quotes are the demo's
    docs = " ".join((ROOT / "docs/comps.md").read_text().split())
    assert f"makes {counts['base']} BASE pairs and {counts['wugs']} pairs in each WUGS subset" in docs
    owl = stimuli[(stimuli["subset"] == "base") & (stimuli["property"] == "can fly")]
    # penguin is the bird that cannot fly: the taxonomic negative of every flying bird
    assert set(owl.loc[owl["negative_sample_type"] == "taxonomic", "unacceptable_concept"]) == {"penguin"}
    norms = pd.read_csv(demo / "resources/demo/comps/xcslb_compressed.csv")
    has = set(zip(norms["concept"], norms["feature"]))
    assert all((c, p) in has for c, p in zip(stimuli["acceptable_concept"], stimuli["property"]))
    assert not any((c, p) in has for c, p in zip(stimuli["unacceptable_concept"], stimuli["property"]))


def test_every_model_kind_is_scored_and_every_table_and_figure_written(demo):
    stimuli = pd.read_parquet(demo / RESULTS / "stimuli/built.parquet")
    for model in MODELS:
        scores = pd.read_parquet(demo / RESULTS / f"scores/{model}.parquet")
        assert len(scores) == len(stimuli) and scores[["acceptable_score", "unacceptable_score"]].lt(0).all().all()
        info = json.loads((demo / RESULTS / f"scores/{model}.json").read_text())
        assert info["family"] == ("gpt2" if model == "tiny-demo-gpt" else "bert") and info["parameters"] > 10_000
    accuracy = pd.read_csv(demo / RESULTS / "tables/accuracy.csv")
    assert len(accuracy) == 3 * 4 and accuracy["accuracy"].between(0, 100).all()
    assert (accuracy["pairs"] == accuracy["subset"].map(stimuli["subset"].value_counts())).all()
    for name in ["statistics", "accuracy", "negative_types", "families"]:
        for fmt in ["md", "csv", "tex"]:
            assert (demo / RESULTS / f"tables/{name}.{fmt}").stat().st_size > 100, (name, fmt)
    statistics = pd.read_csv(demo / RESULTS / "tables/statistics.csv").set_index("subset")
    assert statistics.loc["COMPS-BASE", "paper_pairs"] == 49280 and statistics.loc["COMPS-WUGS", "paper_pairs"] == 13888
    paper = statistics["paper_pairs"].dropna()
    assert (statistics.loc[paper.index, "pairs_minus_paper"] == statistics.loc[paper.index, "pairs"] - paper).all()
    assert "not in our copy" in (demo / RESULTS / "tables/accuracy.md").read_text()
    # issue 39: the layouts label the columns the CSV names for code
    assert "| parameters (millions) |" in (demo / RESULTS / "tables/families.md").read_text()
    assert "| negative-sample type |" in (demo / RESULTS / "tables/negative_types.md").read_text()
    assert "parameters_millions" in pd.read_csv(demo / RESULTS / "tables/families.csv").columns
    for stem in ["accuracy_parameters", "negative_types"]:
        png = demo / RESULTS / f"figures/{stem}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
        assert (demo / RESULTS / f"figures/{stem}.svg").stat().st_size > 10_000


def finished_copy(tmp_path, demo):
    """The project's workflow files with the demo's results and provenance records."""
    project = copy_project(tmp_path)
    for name in ["results", ".snakemake"]:
        shutil.copytree(demo / name, project / name, symlinks=True)
    return project


def test_a_builder_setting_reruns_the_builder_and_what_reads_it_only(tmp_path, demo):
    project = finished_copy(tmp_path, demo)
    path = project / "resources/demo/config.yaml"
    config = yaml.safe_load(path.read_text())
    config["comps"]["build"] = {"seed": 7}
    path.write_text(yaml.safe_dump(config))
    plan = snakemake(project, "comps", "-n", "--configfile", "resources/demo/config.yaml")
    # the stimuli, their scores, the tables (and their report pages) and figures; not the norms'
    # similarities, not the demo models (whose corpus is the norms', not the stimuli); the intervals (and their
    # figure) read the scores
    assert executed_rules(plan) == {
        "comps_build",
        "comps_probe",
        "comps_tables",
        "comps_figures",
        "comps_intervals",
        "comps_intervals_figure",
        "table_html",
    }
    pages = re.findall(r"rule table_html:\n(?:.*\n)*?\s+output: (\S+)", plan.stdout + plan.stderr)
    assert pages and all(page.startswith("results/comps/") for page in pages)


def test_half_precision_on_the_demo_keeps_float32s_decisions_by_the_recheck(tmp_path, demo):
    """COMPS in float16 (the GPU's precision for these float32 checkpoints, run on the CPU): on the
    demo's trained models half precision alone changes pair decisions; the rule's float32
    recheck of the pairs near a tie gives every one of float32's back, so the tables are the
    float32 run's to the byte, while the other scores are float16's."""
    project = finished_copy(tmp_path, demo)
    (project / "half.yaml").write_text("scoring: {device: cpu, dtype: float16}\n")
    run = snakemake(project, "comps", "--configfile", "resources/demo/config.yaml", "half.yaml")
    assert {"comps_probe", "comps_tables"} <= executed_rules(run)
    changed = 0
    for model in MODELS:
        exact = pd.read_parquet(demo / RESULTS / f"scores/{model}.parquet")
        half = pd.read_parquet(project / RESULTS / f"scores/{model}.parquet")
        assert (half["acceptable_score"] != exact["acceptable_score"]).mean() > 0.5  # float16's scores
        right = exact["acceptable_score"] > exact["unacceptable_score"]
        assert ((half["acceptable_score"] > half["unacceptable_score"]) == right).all(), model
        log = (project / f"logs/comps/probe/{model}.log").read_text()
        found = re.search(r"float32 changed (\d+) decisions of the sample and (\d+) of the near pairs", log)
        assert "float32 recheck: 256 of 1,320 pairs sampled" in log and found, log[-2000:]
        changed += int(found[1]) + int(found[2])
        assert "raise comps.scoring.recheck.factor" not in log
    assert changed > 0  # float16 alone would have decided some pairs otherwise
    for name in ["accuracy", "negative_types", "families"]:
        assert (project / RESULTS / f"tables/{name}.csv").read_bytes() == (
            demo / RESULTS / f"tables/{name}.csv"
        ).read_bytes(), name


def test_the_released_files_as_the_stimuli(tmp_path):
    """comps.source: released with a local directory in the release's layout: its lines are
    imported (a bad one counted), and the models score them instead of the built stimuli."""
    project = copy_project(tmp_path)
    release = project / "release"
    release.mkdir()
    line = {
        "id": 0,
        "property": "can fly",
        "acceptable_concept": "robin",
        "unacceptable_concept": "penguin",
        "prefix_acceptable": "a robin",
        "prefix_unacceptable": "a penguin",
        "property_phrase": "can fly.",
        "negative_sample_type": "taxonomic",
        "similarity": 0.9,
    }
    for name in ["comps_wugs", "comps_wugs_dist-before", "comps_wugs_dist-in-between"]:
        (release / f"{name}.jsonl").write_text(json.dumps(line) + "\n")
    (release / "comps_base.jsonl").write_text(json.dumps(line) + "\n{broken\n")
    path = project / "resources/demo/config.yaml"
    config = yaml.safe_load(path.read_text())
    config["comps"].update(source="released", released="release")
    path.write_text(yaml.safe_dump(config))
    plan = snakemake(project, "comps", "-n", "--configfile", "resources/demo/config.yaml")
    assert "comps_import_released" in executed_rules(plan) and "comps_build" not in executed_rules(plan)
    snakemake(project, "results/comps/stimuli/released.parquet", "--configfile", "resources/demo/config.yaml")
    stimuli = pd.read_parquet(project / RESULTS / "stimuli/released.parquet")
    assert len(stimuli) == 4 and set(stimuli["origin"]) == {"released"}
    rejects = pd.read_csv(project / RESULTS / "stimuli/released.rejects.csv")
    assert rejects[["file", "reason", "n"]].to_dict("records") == [
        {"file": "comps_base.jsonl", "reason": "invalid_json", "n": 1}
    ]


def test_a_pair_a_model_cannot_score_is_left_out_for_it_and_counted(tmp_path, demo):
    """Released stimuli holding a 300-word property phrase and a zero-width space (issue 44):
    every model's job ends (before: the first stopped that model's whole probe, printing the
    whole text; the second "has no tokens to score"); the pairs are left out for the models that
    cannot score them, counted in the job's log and the accuracy tables' footnote, and every
    other pair is scored."""
    project = finished_copy(tmp_path, demo)
    built = pd.read_parquet(demo / RESULTS / "stimuli/built.parquet").groupby("subset").head(6)
    long = " ".join(["can fly and swim"] * 75) + "."
    base = built[built["subset"] == "base"].iloc[0]
    extra = pd.DataFrame([dict(base, id=9001, property_phrase=long), dict(base, id=9002, property_phrase="\u200b")])
    stimuli = pd.concat([built, extra], ignore_index=True)
    release = project / "release"
    release.mkdir()
    files = {
        "base": "comps_base.jsonl",
        "wugs": "comps_wugs.jsonl",
        "wugs_dist_before": "comps_wugs_dist-before.jsonl",
        "wugs_dist_in_between": "comps_wugs_dist-in-between.jsonl",
    }
    for subset, name in files.items():
        rows = stimuli[stimuli["subset"] == subset].drop(columns=["subset", "origin"])
        records = [
            {**r, "similarity": None if pd.isna(r["similarity"]) else r["similarity"]} for r in rows.to_dict("records")
        ]
        (release / name).write_text("".join(json.dumps(r) + "\n" for r in records))
    path = project / "resources/demo/config.yaml"
    config = yaml.safe_load(path.read_text())
    config["comps"].update(source="released", released="release")
    path.write_text(yaml.safe_dump(config))
    snakemake(project, "comps", "--configfile", "resources/demo/config.yaml")
    for model in MODELS:
        scores = pd.read_parquet(project / RESULTS / f"scores/{model}.parquet").set_index(["subset", "id"])
        assert len(scores) == len(stimuli)
        assert scores.loc[("base", 9001), "left_out"] == "too_long", model
        if model != "tiny-demo-gpt":  # WordPiece drops the zero-width space
            assert scores.loc[("base", 9002), "left_out"] == "no_tokens", model
        scored = scores["left_out"] == ""
        assert scored.sum() >= len(built) and scores.loc[scored, "acceptable_score"].notna().all()
        log = (project / f"logs/comps/probe/{model}.log").read_text()
        assert "pairs left out for this model" in log and long not in log and "characters) is" in log
    accuracy = pd.read_csv(project / RESULTS / "tables/accuracy.csv").set_index(["model", "subset"])
    assert accuracy.loc[("tiny-demo-bert", "base"), "left_out"] == 2
    assert accuracy.loc[("tiny-demo-bert", "base"), "pairs"] == (built["subset"] == "base").sum()
    assert (
        "Pairs left out (the model could not score them; in no accuracy): tiny-demo-bert 2"
        in (project / RESULTS / "tables/accuracy.md").read_text()
    )
