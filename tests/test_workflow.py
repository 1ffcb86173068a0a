"""The workflow as a whole, on the embedded demo: contracts of every output, reruns, interruption,
the report, lint, the full dry run, config errors, cluster submission and downloads.

One demo run (the ``demo`` fixture) is shared by the tests that only read it; a test that changes
anything works on a copy of the project in a temporary directory, so the checkout stays clean.
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import fnmatch
import io
import itertools
import json
import os
import pty
import re
import shutil
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

from knowprobe import contracts

from conftest import (
    DEMO,
    ROOT,
    RULE_LINE,
    copy_demo,
    copy_project,
    default_sigint,
    executed_rules,
    smk_rules,
    snakemake,
)

pytestmark = pytest.mark.workflow


def test_every_parquet_output_keeps_its_contract_and_its_place(demo):
    seen = set()
    for path in sorted((demo / "results").rglob("*.parquet")):
        relative = str(path.relative_to(demo))
        schema = pq.read_schema(path)
        name = (schema.metadata or {}).get(b"knowprobe.contract", b"").decode()
        assert name in contracts.CONTRACTS, f"{relative} carries no known contract"
        contract = contracts.CONTRACTS[name]
        contracts.check(path, contract)
        assert [f.type for f in schema] == [f.type for f in contract.schema], relative
        assert any(fnmatch.fnmatch(relative, pattern) for pattern in contract.paths), f"{relative} is no {name} path"
        seen.add(name)
    assert seen == set(contracts.CONTRACTS), f"contracts no demo output has: {set(contracts.CONTRACTS) - seen}"


def test_interrupted_run_resumes_and_gives_identical_tables(demo, tmp_path):
    """Ctrl-C during training, then the same target at --cores 1: the run completes, with the
    probe table and model weights of the uninterrupted shared run at --cores 2, byte for byte
    (issue 17: the weights depended on torch's thread count). The target is the smaller masked
    model's S-TEST probe table, on a copy of the finished demo without that model and its table
    (its training from scratch, then its probe), to keep the suite short; every model's training
    is held to the thread count by test_demo_training_does_not_depend_on_the_thread_count."""
    project = tmp_path / "project"
    copy_demo(demo, project)
    output = tmp_path / "interrupted.log"
    models = ["tiny-demo-bert-small"]
    targets = [f"results/stest/scores/{model}.parquet" for model in models]
    for model, target in zip(models, targets):
        shutil.rmtree(project / "results/models" / model)
        for path in (target, f"{target}.sha256"):
            (project / path).unlink()
    shutil.rmtree(project / "logs/train_demo_model")
    # a shell starts background commands with SIGINT ignored, and that is inherited: restore the
    # default, as in the terminal of a user who presses Ctrl-C
    process = subprocess.Popen(
        [sys.executable, "-m", "snakemake", "--cores", "2", *targets, *DEMO],
        cwd=project,
        stdout=output.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=default_sigint,
    )
    train_log = project / "logs/train_demo_model/tiny-demo-bert-small.log"
    deadline = time.time() + 240
    while time.time() < deadline and not (train_log.exists() and "step 500" in train_log.read_text()):
        assert process.poll() is None, "the run ended before training got going"
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGINT)  # what a terminal sends on Ctrl-C
    assert process.wait(timeout=120) != 0, output.read_text()[-3000:]
    assert not (project / "results/models/tiny-demo-bert-small/config.json").exists(), "a half-trained model was left"
    assert not any((project / target).exists() for target in targets)
    resumed = snakemake(project, *targets, *DEMO, "--cores", "1")
    # the end of a run says where the results are; no "Shell command: None" per job
    said = resumed.stdout + resumed.stderr
    assert "knowprobe: done. Tables and figures: results/lpaqa/tables" in said and "Shell command" not in said
    # also: two runs from scratch agree exactly (the tables and the digests beside them)
    for target in targets:
        for path in (target, f"{target}.sha256"):
            assert (project / path).read_bytes() == (demo / path).read_bytes(), path
    for model in models:
        weights = f"results/models/{model}/model.safetensors"
        assert (project / weights).read_bytes() == (demo / weights).read_bytes(), model


def test_the_readme_states_the_suites_size(request):
    """Issue 28: the README's figures are held to what a run gives (the demo's minutes and the
    suite's are measured, not testable here: the docs give the date; the demo's jobs, a dry run of
    ./knowprobe.sh demo's configs: tests/test_gguf.py)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    stated = int(re.search(r"about ([\d,]+) tests", readme).group(1).replace(",", ""))  # "about 1,000 tests"
    if request.config.args and request.config.args != ["tests"]:
        pytest.skip("the suite's size is checked only when the whole suite runs (the README's command)")
    assert abs(len(request.session.items) - stated) <= 0.05 * stated, len(request.session.items)


def planned_wildcards(result: subprocess.CompletedProcess, rule: str) -> list[str]:
    """The wildcards of each job of ``rule`` in a run's or dry run's output."""
    jobs = re.split(r"\n(?=(?:local)?rule \w+:)", result.stdout + result.stderr)
    return [re.search(r"wildcards: (.*)", job).group(1) for job in jobs if re.match(rf"(?:local)?rule {rule}:", job)]


@contextlib.contextmanager
def edited(project: Path, module: str):
    """A knowprobe module with an edit appended, for a dry run; then as it was, time stamp included."""
    path = project / "workflow/scripts/knowprobe" / module
    original, stamp = path.read_bytes(), path.stat()
    path.write_bytes(original + f"\n# an edit of {module}\n".encode())
    try:
        yield
    finally:
        path.write_bytes(original)
        os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))


def with_config(project: Path, name: str, change) -> str:
    """A copy of the demo config with ``change(config)`` applied, as a file name to pass on (its
    models in the demo's order: another order changes the studies' model lists, whose jobs rerun)."""
    config = yaml.safe_load((project / "resources/demo/config.yaml").read_text())
    change(config)
    (project / name).write_text(yaml.safe_dump(config, sort_keys=False))
    return name


def planned_jobs(project: Path, *args: str) -> dict[str, int]:
    """Jobs per rule that a dry run plans (``all`` and the study targets left out)."""
    return jobs_of(snakemake(project, "-n", *args))


def jobs_of(result: subprocess.CompletedProcess) -> dict[str, int]:
    names = RULE_LINE.findall(result.stdout + result.stderr)
    return {name: names.count(name) for name in set(names) - {"all", "lpaqa"}}


# the paper's 15 tables are shown in the report as pages of their own (table_html)
PAPER_TABLES = {"lpaqa_paper_tables": 1, "lpaqa_paper_figures": 1, "table_html": 15}
# and since issue 42 the selection's per-fact results feed the intervals (two more pages), its
# Top-1 prompts the calibration (one more)
SELECTION_AND_AFTER = {
    "lpaqa_selection": 4,  # the two BERTs' mask runs and the GPT's next_token and statement runs
    "lpaqa_score_tables": 1,
    "lpaqa_cross_model": 2,
    **PAPER_TABLES,
    "lpaqa_intervals": 1,
    "lpaqa_intervals_figure": 1,
    "lpaqa_calibration": 4,  # every run: the two BERTs' mask scores, the GPT's next-token and statement scores
    "lpaqa_calibration_report": 1,
    "table_html": 20,
}


def test_changed_stage_reruns_only_itself_and_what_depends_on_it(demo, tmp_path):
    project = tmp_path / "project"
    copy_demo(demo, project)  # results and provenance records included
    probes = sorted((project / "results/lpaqa/probe").rglob("*"))
    stamps = {path: path.stat().st_mtime_ns for path in probes}
    assert executed_rules(snakemake(project, *DEMO)) == set(), "a finished run should have nothing to do"
    # nor has its dry run an LPAQA score to count (counting tokenizes every statement: seconds)
    said = snakemake(project, "-n", *DEMO)
    assert "what each LPAQA score costs" not in said.stdout + said.stderr

    # the selection module: the same, and the backward stage, which takes its top-B objects from it
    with edited(project, "lpaqa/selection.py"):
        assert planned_jobs(project, *DEMO) == {**SELECTION_AND_AFTER, "lpaqa_backward": 4}
    # the paper's tables and figures, and the tables that take their rows and set names
    with edited(project, "lpaqa/paper.py"):
        assert planned_jobs(project, *DEMO) == {
            **PAPER_TABLES,
            "lpaqa_intervals": 1,
            "lpaqa_intervals_figure": 1,
            "lpaqa_consistency": 1,
            "table_html": 18,
        }

    # metrics: evaluation and what follows; of the probes only Mine+Para's (the seeded job), whose
    # seeds are chosen by T-REx-train P@1 (the seeds, their paraphrases, and their probes for every
    # run: the two BERTs' and the GPT's two scores)
    with edited(project, "lpaqa/metrics.py"):
        said = snakemake(project, "-n", *DEMO)
    planned = jobs_of(said)
    assert planned["lpaqa_probe_seeded"] == 4 and "lpaqa_probe" not in planned and planned["lpaqa_paraphrase"] == 1
    # the dry run counts the score of each run it probes: all four
    costs = (said.stdout + said.stderr).split("what each LPAQA score costs")[1]
    for run in ["tiny-demo-bert", "tiny-demo-bert-small", "tiny-demo-gpt@next_token", "tiny-demo-gpt@statement"]:
        assert f"\n  {run} (" in costs, run
    assert "after prefix sharing" in costs
    assert {"lpaqa_evaluate", "lpaqa_majority", "lpaqa_tables", "lpaqa_select_paraphrase_seeds"} <= set(planned)
    assert not set(planned) & {"train_demo_model", "lpaqa_filter_facts", "lpaqa_refine", "lpaqa_lama_uhn"}

    # the shared masked-LM scorer: every rule that runs the model; not the vocabularies, the fact
    # filter, the demo model or the translators, which do not
    with edited(project, "scoring/masked.py"):
        said = snakemake(project, "-n", *DEMO)
    planned = jobs_of(said)
    # (every LPAQA run: the scoring package's modules are imported together)
    assert planned["lpaqa_probe"] == planned["lpaqa_probe_seeded"] == 4
    # the multi-token probes' costs, each method's and, for the masked models, open decoding's together
    costs = (said.stdout + said.stderr).split("what each way of asking the multi-token facts costs")[1]
    together = [line for line in costs.splitlines() if "open decoding together" in line]
    assert [line.split(":")[0].strip() for line in together] == ["tiny-demo-bert", "tiny-demo-bert-small"]
    assert "\n  tiny-demo-gpt: generate: " in costs and "at most" in together[0]
    assert {"lpaqa_refine", "lpaqa_lama_uhn", "lpaqa_backward"} <= set(planned)
    assert not set(planned) & {
        "train_demo_model",
        "lpaqa_filter_facts",
        "lpaqa_train_demo_translator",
        "wikidata_chunk",
    }

    # the shared table renderer, which the hand-kept module lists of two rules once missed
    with edited(project, "tables.py"):
        planned = planned_jobs(project, *DEMO)
    assert {"lpaqa_tables", "lpaqa_mine_prompts"} <= set(planned)
    assert not set(planned) & {"train_demo_model", "lpaqa_filter_facts", "lpaqa_majority", "wikidata_chunk"}

    # the Wikidata stage (shared): the parse, T-REx-train, the demo corpus (which states Wikidata's
    # facts) and what follows; not the test sets' import nor the Wikipedia extraction
    with edited(project, "wikidata.py"):
        planned = set(planned_jobs(project, *DEMO))
    assert {"wikidata_index", "wikidata_chunk", "wikidata_gather", "lpaqa_trex_train", "train_demo_model"} <= planned
    assert not planned & {"lpaqa_import_facts", "lpaqa_wikipedia_extract", "lpaqa_train_demo_translator"}

    # the paraphrase stage (and the demo translators, which share its stand-in code): both
    # paraphrase sets and the probes that hold them (each model's first job holds Man+Para, its
    # seeded job Mine+Para), nothing of mining
    with edited(project, "lpaqa/paraphrase.py"):
        result = snakemake(project, "-n", *DEMO)
    planned = job_counts(result.stdout + result.stderr)
    # the probes of every run (the BERTs' and the GPT's two scores) hold the paraphrase sets
    assert planned["lpaqa_probe"] == planned["lpaqa_probe_seeded"] == "4" and planned["lpaqa_paraphrase"] == "2"
    assert "lpaqa_train_demo_translator" in executed_rules(result) and "lpaqa_mine_prompts" not in planned
    # a parameter of the stage: the paraphrase jobs and their probes, not the translators
    fewer = with_config(project, "fewer.yaml", lambda c: c["lpaqa"]["paraphrase"].update(top=5))
    planned = planned_jobs(project, "--configfile", fewer)
    assert planned["lpaqa_paraphrase"] == 2 and planned["lpaqa_probe"] == planned["lpaqa_probe_seeded"] == 4
    assert "lpaqa_train_demo_translator" not in planned
    assert executed_rules(snakemake(project, "-n", *DEMO)) == set()  # every edit undone: nothing to do

    # a method's settings: the selection stage (one job per model) and what reads it, never a
    # probe: the encoder does not run again
    fewer_k = with_config(project, "k.yaml", lambda c: c["lpaqa"].setdefault("selection", {}).update(max_k=5))
    ran = executed_rules(snakemake(project, "--configfile", fewer_k))
    assert ran == set(SELECTION_AND_AFTER)
    assert all(path.stat().st_mtime_ns == stamps[path] for path in probes)
    figure2 = pd.read_csv(project / "results/lpaqa/figures/figure2.csv")
    assert sorted(set(figure2["K"])) == [1, 2, 3, 4, 5]
    for name, change in [
        (
            "opti.yaml",
            lambda c: c["lpaqa"].setdefault("selection", {}).setdefault("opti", {}).update(learning_rate=0.05),
        ),
        ("seed.yaml", lambda c: c["lpaqa"]["trex_train"].update(split_seed=3)),
    ]:
        assert planned_jobs(project, "--configfile", with_config(project, name, change)) == SELECTION_AND_AFTER
    # B, the backward features' number of objects: their scoring (a model pass over short inputs), not the probes
    fewer_b = with_config(project, "b.yaml", lambda c: c["lpaqa"]["backward"].update(top=2))
    assert planned_jobs(project, "--configfile", fewer_b) == {**SELECTION_AND_AFTER, "lpaqa_backward": 4}


# the rules that compute intervals, each study's figure of them and their report pages (intervals
# and comparisons of each study: LPAQA, S-TEST, COMPS and BEAR)
INTERVAL_RULES = {
    "lpaqa_intervals": 1,
    "lpaqa_intervals_figure": 1,
    # issue 56: consistency, calibration (every run: it reads stored states, runs no probe) and the
    # multi-token tables carry intervals too
    "lpaqa_consistency": 1,
    "lpaqa_calibration": 4,
    "lpaqa_calibration_report": 1,
    "lpaqa_multitoken_tables": 1,
    "lpaqa_multitoken_figure": 1,
    "stest_intervals": 1,
    "stest_intervals_figure": 1,
    "comps_intervals": 1,
    "comps_intervals_figure": 1,
    "bear_intervals": 1,
    "bear_intervals_figure": 1,
    "table_html": 14,
}


def test_the_bootstrap_settings_rerun_only_the_intervals(demo, tmp_path):
    """Issue 42: changing only the bootstrap's B or seed reruns only the rules that compute
    intervals (and what shows them), never a probe or a table of point estimates; the same seed
    gives the same numbers again."""
    project = tmp_path / "project"
    copy_demo(demo, project)
    tables = [project / f"results/{study}/tables/intervals.csv" for study in ("lpaqa", "stest", "comps", "bear")]
    before = [path.read_text() for path in tables]
    fewer = with_config(project, "b.yaml", lambda c: c.setdefault("uncertainty", {}).update(bootstrap=2000))
    assert planned_jobs(project, "--configfile", fewer) == INTERVAL_RULES
    other = with_config(project, "seed.yaml", lambda c: c.setdefault("uncertainty", {}).update(seed=1))
    assert executed_rules(snakemake(project, "--configfile", other)) == set(INTERVAL_RULES)
    lpaqa = pd.read_csv(tables[0])
    assert not lpaqa.equals(pd.read_csv(io.StringIO(before[0]))), "another seed, other intervals"
    assert lpaqa["micro"].tolist() == pd.read_csv(io.StringIO(before[0]))["micro"].tolist()  # the values stay
    # the first seed again, for the tables compared: their four rules (not the 30 jobs of the
    # figures and pages, which the seed's run above showed rerun; a minute of the suite)
    targets = [str(path.relative_to(project)) for path in tables]
    own_rules = {f"{study}_intervals" for study in ("lpaqa", "stest", "comps", "bear")}
    assert executed_rules(snakemake(project, *targets, *DEMO)) == own_rules
    assert [path.read_text() for path in tables] == before


def test_a_report_of_other_results_than_its_configs_is_refused(demo):
    """Issue 18: a report built without the run's --configfile exited 0 with 215 "Missing
    metadata" warnings and labelled the demo's numbers with config.yaml's models."""
    assert all((demo / f"results/{study}/config.yaml").is_file() for study in ("lpaqa", "stest", "comps", "bear"))
    result = snakemake(demo, "--report", "other.html", check=False)
    assert result.returncode != 0 and not (demo / "other.html").exists()
    assert (
        "results/lpaqa/config.yaml: the results here come from another config (models: tiny-demo-bert"
        in result.stderr + result.stdout
    )


def test_report_shows_tables_in_place_figures_and_headline_numbers(demo):
    """Issue 18: the report's tables were CSV files the browser downloads, and the landing page
    held no number."""
    snakemake(demo, *DEMO, "--report", "report.html")
    html = (demo / "report.html").read_text(errors="replace")
    # issue 55: no docutils system message on any page ("Undefined substitution referenced")
    assert "system-message" not in html, re.findall(r"System Message: [^<]*<[^>]*>[^<]*<[^>]*>[^<]*", html)
    landing = landing_page(html)
    for study in ["LPAQA", "S-TEST", "COMPS", "BEAR"]:
        assert f"<strong>{study}</strong> (" in landing, study
    assert "probes masked language models (tiny-demo-bert, tiny-demo-bert-small;" in landing
    assert "a causal language model (tiny-demo-gpt;" in landing
    paper = [f"table{i}.html" for i in range(1, 16)] + [f"figure{i}.png" for i in range(2, 6)]
    pages = ["baseline.html", "per_relation.html", "rejects.html", "p_r.html", "accuracy.html", "statistics.html"]
    for name in [*pages, "baseline_per_relation.png", "accuracy_parameters.png", "specificity.png", *paper]:
        assert name in html, name
    entries = set(re.findall(r'"(results/[\w/.-]+)": \{', html))  # the report's results, by path
    # 37 before the interval, comparison, consistency, calibration and LPAQA score tables (47 with
    # them; 49 with BEAR's intervals and comparisons; 51 with the multi-token tables; 52 with their
    # paired comparisons; 53 with BEAR's calibration)
    assert len([e for e in entries if e.endswith(".html")]) == 53
    assert "results/lpaqa/tables/multitoken.html" in entries and "results/lpaqa/figures/multitoken.png" in entries
    # the interval figures of every study (error bars, issue 42)
    for study in ["lpaqa", "stest", "comps", "bear"]:
        assert f"results/{study}/figures/intervals.png" in entries, study
    assert all(e.endswith((".html", ".png")) for e in entries)  # no entry is a CSV the browser downloads
    for category in ["LPAQA", "S-TEST", "COMPS", "BEAR", "Shared data"]:
        assert category in html
    # the landing page: one line per model and study, from the study's table
    accuracy = pd.read_csv(demo / "results/comps/tables/accuracy.csv")
    base = accuracy[(accuracy["model"] == "tiny-demo-bert") & (accuracy["subset"] == "base")]["accuracy"].iloc[0]
    assert f"tiny-demo-bert: COMPS-BASE {base:.1f}" in html
    assert "tiny-demo-bert: manual prompts" in html
    # S-TEST's line says whether its p_r has an interval: the demo's 5 relations are enough (an
    # empty note read back from the CSV once made every line say "too few for an interval")
    assert "tiny-demo-bert: p_r" in html and "(vanilla prompts, average; 5 relations, 95% interval)" in html
    assert "too few for an interval)</li>" not in html
    # BEAR's line: the score with its interval, or the demo's 4 relations said too few, and the sem
    # over templates (the leaderboard's ±, which the report's JSON writes as \u00b1)
    assert "tiny-demo-bert: BEAR score " in html and "(4 relations, too few for an interval; " in html
    assert "sem over 3 templates)" in html
    # issue 39: each headline link opens its table (not its info panel), named by study and table:
    # the interval tables (issue 42), each with the study in its label
    for study in ["lpaqa", "stest", "comps", "bear"]:
        assert (
            f"javascript:app.setView({{content:'html',contentPath:results['results/{study}/tables/intervals.html']"
            in html
        )
    assert ">LPAQA P&#64;1 with 95% intervals" in html and ">S-TEST p_r with 95% intervals" in html
    assert "showResultInfo('results/" not in html
    # a table page's caption is its registered caption file, shown once: not among the job's parameters
    caption = (ROOT / "workflow/report/comps/accuracy.rst").read_text().split(":")[0]
    assert html.count(caption) == 1 and re.search(r'"caption": "[^"]*<p>' + re.escape(caption), html)
    page = (demo / "results/lpaqa/tables/table2.html").read_text()
    assert "Table 2. The paper&#x27;s caption: &quot;Micro-averaged accuracy" in page and "<th>Top1</th>" in page


def landing_page(html: str) -> str:
    """The report's landing page (its HTML, as the report's data holds it)."""
    start = html.index("knowprobe measures")
    begin = max(i for i in (m.start() for m in re.finditer(r'(?<!\\)"', html[:start])))
    end = next(m.start() for m in re.finditer(r'(?<!\\)"', html[start:])) + start
    return json.loads(html[begin : end + 1])


def test_a_one_study_report_has_no_error_and_describes_that_study_alone(demo):
    """Issue 55: a BEAR-only report showed "Docutils System Messages" on its first screen and
    described LPAQA (with the schema's defaults), S-TEST and COMPS, which it did not run."""
    snakemake(demo, *DEMO, "--config", "studies=[bear]", "--report", "bear-only.html")
    html = (demo / "bear-only.html").read_text(errors="replace")
    assert "system-message" not in html
    landing = landing_page(html)
    assert "<strong>BEAR</strong> (" in landing and "Studies: BEAR." in landing
    for other in ["LPAQA", "S-TEST", "COMPS", "Shared data"]:
        assert other not in landing, other
    assert "tiny-demo-bert: BEAR score " in landing
    assert ">The BEAR score with 95% intervals<" in landing and "BEAR the BEAR" not in landing
    import report_screenshots

    assert report_screenshots.shown(demo / "bear-only.html")[0] == ["BEAR"]  # its one category, shot once


def test_captions_quote_the_paper_and_state_this_runs_numbers(demo):
    """Issue 28: the demo's Table 2 said "Majority gives us 22.0%" above a Majority row of 17.4,
    Table 1 "averaged across 41 relations" for 6, and LPAQA's rows from the demo's stand-in files
    were unmarked."""
    tables = demo / "results/lpaqa/tables"
    trex = {path.stem for path in (demo / "resources/demo/lama/TREx").glob("*.jsonl")}
    table1 = (tables / "table1.md").read_text().splitlines()[0]
    assert table1.startswith(
        "Table 1. The paper's caption: \"Dataset statistics. All the values are averaged across 41"
    )
    assert f"In this run: each value is averaged over the {len(trex)} T-REx relations of this run." in table1
    assert 0 < len(trex) < 41
    table2 = pd.read_csv(tables / "table2.csv")
    majority = table2.loc[table2["prompts"] == "Majority", "ours"].dropna().round(1).unique()
    assert len(majority) == 1
    caption = (tables / "table2.md").read_text().splitlines()[0]
    assert '"Micro-averaged accuracy of different methods (%). Majority gives us 22.0%."' in caption
    assert f"In this run: Majority gives {majority[0]:.1f}%." in caption
    # the demo's release folder is a stand-in (its STAND-IN.md says so): every row from it is marked
    released = table2[table2["prompts"].str.startswith("LPAQA's")]
    assert len(released) and released["prompts"].str.endswith(" (stand-in)").all()
    assert "Rows and columns marked (stand-in) come from stand-in files" in caption
    assert "LPAQA's Mine (stand-in)" in (tables / "table9.md").read_text().splitlines()[2]  # a column
    assert "(stand-in)" not in (tables / "table1.md").read_text()


# tables with many columns, which must fit the report's frame at 1366 pixels wide
WIDE_TABLES = ["stest/tables/table5", "comps/tables/statistics", "lpaqa/tables/table2"]


def test_the_report_in_a_real_browser(demo, tmp_path):
    """Headless Chromium opens the report's landing page, each study's category and a table and a
    figure shown in place; each screenshot holds a rendered page, each differs from the others."""
    import report_screenshots

    if report_screenshots.browser() is None:
        pytest.skip("no Chromium (apt-get install chromium): the report is checked in a browser only where one is")
    if not (demo / "report.html").exists():
        snakemake(demo, *DEMO, "--report", "report.html")
    import matplotlib.image

    shots = report_screenshots.take(
        demo / "report.html",
        tmp_path,
        ["LPAQA", "S-TEST", "COMPS"],
        ["results/comps/tables/accuracy.html", "results/comps/figures/accuracy_parameters.png"],
    )
    images = [matplotlib.image.imread(shot) for shot in shots]
    chromium = report_screenshots.browser()
    report = demo / "report.html"
    # Issue 28: the landing page opened scrolled past its top, the headline numbers out of reach;
    # wide tables were cut at the frame's edge; the paper's tables sorted as 1, 10, 11, ..., 2
    for size in ["1366,768", "1920,1080"]:
        headline = report_screenshots.measure(report, "", report_screenshots.HEADLINE, chromium, size)
        assert headline and 0 <= headline["top"] and headline["bottom"] <= headline["height"], (size, headline)
        views = report_screenshots.views([], [f"results/{t}.html" for t in WIDE_TABLES])
        frame = report_screenshots.measure(
            report, views["result-table5.html"], report_screenshots.FRAME_WIDTH, chromium, size
        )
        for table in WIDE_TABLES:
            page = demo / "results" / f"{table}.html"
            width = report_screenshots.measure(
                page, "", report_screenshots.OVERFLOW, chromium, f"{frame},{size.split(',')[1]}"
            )
            assert width["content"] <= width["window"], (size, table, width)
    listed = report_screenshots.measure(
        report,
        "app.setView({navbarMode: 'subcategory', category: 'LPAQA', subcategory: \"The paper's tables\"})",
        "document.querySelector('nav').innerText",
        chromium,
    )
    # the headline link opens the table itself, in the content frame
    link = "a => a.textContent.startsWith('S-TEST p_r with 95% intervals')"
    click = f"Array.from(document.querySelectorAll('a')).find({link}).click()"
    frame = "document.querySelector('iframe') ? document.querySelector('iframe').src.slice(0, 60) : null"
    opened = report_screenshots.measure(report, click, frame, chromium)
    assert opened and opened.startswith("data:text/html"), opened
    numbers = [int(n) for n in re.findall(r"Table\W+(\d+):", listed)]
    assert numbers == list(range(1, 16)), listed
    for shot, image in zip(shots, images):
        assert image.shape[0] > 500 and image.std() > 0.05, shot  # not a blank page
    for (a, first), (b, second) in itertools.combinations(zip(shots, images), 2):
        assert first.shape != second.shape or not (first == second).all(), (a, b)  # each view drawn


def test_lint_is_clean():
    for config in ([], DEMO):
        result = snakemake(ROOT, "--lint", *config)
        assert "Lints for" not in result.stdout + result.stderr


def dry_run_output(project: Path, *args: str) -> str:
    """A dry run's output; targets go first in ``args`` (--quiet and --configfile take several values)."""
    result = snakemake(project, *args, "-n", "--quiet", "rules")
    return result.stdout + result.stderr


def job_counts(output: str) -> dict[str, str]:
    """Jobs per rule of a dry run's output (and "total")."""
    return dict(re.findall(r"^(\w+)\s+(\d+)$", output, re.MULTILINE))


def dry_run_counts(project: Path, *args: str) -> dict[str, str]:
    return job_counts(dry_run_output(project, *args))


def readme_block(after: str) -> list[str]:
    """The lines of the README's first code block after the text ``after``."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return text[text.index(after) :].split("```\n", 2)[1].strip().splitlines()


def test_default_config_dry_run_builds_the_whole_dag_without_downloading(tmp_path):
    project = copy_project(tmp_path)
    output = dry_run_output(project)
    counts = job_counts(output)
    # the README's figures (issue 28): the job count, and the cost as the dry run prints it
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"A dry run (`snakemake -n`) of `config.yaml` plans {counts['total']} jobs" in readme
    cost = readme_block("A dry run (`snakemake -n`) of `config.yaml`")
    printed = output[output.index("knowprobe: what this run costs") :].splitlines()[1 : len(cost) + 1]
    assert [line.strip() for line in printed] == cost
    # one study's target: that study's cost alone (issue 39: a run prints what it has to do)
    alone = dry_run_output(project, "comps")
    printed = alone[alone.index("knowprobe: what this run costs") :].splitlines()[1:3]
    comps = next(line for line in cost if line.startswith("comps:"))
    assert [line.strip() for line in printed] == [comps, comps.replace("comps:", "total:")]
    # bert-base-cased, bert-large-cased (LPAQA, S-TEST, COMPS), roberta-base, roberta-large, gpt2
    # (S-TEST, COMPS) and COMPS's 17 others: each downloaded once
    assert counts["lpaqa_download_lama"] == "1" and counts["download_model"] == "22"
    assert counts["stest_download_release"] == "1" and counts["stest_import_released"] == "1"
    assert counts["stest_download_common_vocab"] == "1" and counts["stest_build"] == "1"
    assert counts["stest_probe"] == "5" and counts["stest_tables"] == "1" and counts["stest_figures"] == "1"
    assert counts["lpaqa_tables"] == "1" and counts["lpaqa_baseline_figure"] == "1"
    assert counts["download_wikidata"] == "1" and counts["wikidata_chunk"] == "16"
    assert counts["lpaqa_trex_train"] == "1"
    assert counts["lpaqa_download_wikipedia"] == "1" and counts["lpaqa_wikipedia_extract"] == "32"
    assert counts["lpaqa_distant_supervision"] == "32" and counts["lpaqa_mine_prompts"] == "1"
    # two probe jobs per run (every set but Mine+Para on all datasets and splits, then Mine+Para):
    # the two BERTs' mask runs and GPT-2's next-token run; then per run one selection job; per
    # masked model one backward job per set of lpaqa.backward (mine, man_para) and one cross-model
    # job (backward and the cross-model ensemble rank at a mask); one refinement (by the first
    # model); LAMA-UHN once
    assert counts["lpaqa_probe"] == counts["lpaqa_probe_seeded"] == "3" and counts["lpaqa_selection"] == "3"
    assert counts["lpaqa_backward"] == "4" and counts["lpaqa_cross_model"] == "2"
    assert counts["lpaqa_refine"] == "1" and counts["lpaqa_lama_uhn"] == "1"
    assert counts["lpaqa_download_release"] == "1" and counts["lpaqa_release_prompts"] == "3"
    assert counts["lpaqa_paper_tables"] == "1" and counts["lpaqa_paper_figures"] == "1"
    assert counts["lpaqa_download_translator"] == "2" and counts["lpaqa_paraphrase"] == "2"
    for download in ["norms", "wordnet", "glove", "release"]:
        assert counts[f"comps_download_{download}"] == "1"
    assert counts["comps_similarity"] == "1" and counts["comps_build"] == "1" and counts["comps_import_released"] == "1"
    assert counts["comps_probe"] == "22" and counts["comps_tables"] == "1" and counts["comps_figures"] == "1"
    assert "comps_demo_corpus" not in counts
    assert "train_demo_model" not in counts and "lpaqa_demo_corpus" not in counts  # no model is trained
    for downloaded in [
        "resources/lama",
        "resources/models",
        "resources/wikidata",
        "resources/wikipedia",
        "resources/comps",
    ]:
        assert not (project / downloaded).exists()


def test_a_study_runs_alone_from_its_target(tmp_path):
    """`snakemake lpaqa` plans LPAQA's jobs and of another study only its part of the demo models'
    corpus (the tiny models train on the corpora of every study in `studies`); rule all plans the
    union of the studies' targets."""
    project = copy_project(tmp_path)
    alone = {study: dry_run_counts(project, study, *DEMO) for study in ("lpaqa", "stest", "comps", "bear")}
    for study, counts in alone.items():
        assert counts.pop(study) == "1" and "all" not in counts
        for other in set(alone) - {study}:
            planned = {r for r in counts if r.startswith(f"{other}_")}
            # LPAQA's demo corpus writes LAMA's facts with its manual prompts' words
            corpus = {
                "lpaqa": {"lpaqa_demo_corpus", "lpaqa_import_facts", "lpaqa_manual_prompts"},
                "bear": {"bear_demo_corpus", "bear_import"},  # BEAR's demo corpus writes its imported facts
            }.get(other, set())
            assert planned == {f"{other}_demo_corpus"} | corpus, (study, other, planned)
    output = dry_run_output(project, *DEMO)
    # issue 39: the offline demo's dry run downloads nothing, and the full run's figures are not its own
    assert "knowprobe: this run downloads nothing and runs no stage at the full reproduction's size" in output
    assert "total: downloads" not in output
    everything = job_counts(output)
    assert everything.pop("all") == "1"
    # the demo's size as docs/lpaqa.md quotes it (issue 18: quoted numbers went stale)
    assert f"The demo's tiny models alone ({everything['total']} jobs)" in (ROOT / "docs/lpaqa.md").read_text()
    # shared jobs (the Wikidata parse, the demo models: LPAQA trains only the masked ones) counted once
    rules = set().union(*alone.values()) - {"total", "table_html"}
    union = {r: str(max(int(alone[s].get(r, 0)) for s in alone)) for r in rules}
    assert {r: n for r, n in everything.items() if r not in ("total", "table_html")} == union
    # the report pages: each study's own, and the shared Wikidata parse's once
    pages = {s: set(planned_wildcards(snakemake(project, s, "-n", *DEMO), "table_html")) for s in alone}
    assert pages["lpaqa"] & pages["stest"] == {"stem=results/wikidata/rejects"}
    assert int(everything["table_html"]) == len(set().union(*pages.values()))


# each study alone, with models of only one kind (each probes either; issue 52: LPAQA causal too)
ALONE = [
    ("lpaqa", "masked"),
    ("lpaqa", "causal"),
    ("stest", "masked"),
    ("stest", "causal"),
    ("comps", "masked"),
    ("comps", "causal"),
]


def alone_config(project: Path, study: str, kind: str) -> str:
    """The demo's config (every study's section kept) with ``studies: [study]`` and only the
    demo models of ``kind``; its name, for --configfile."""
    config = yaml.safe_load((project / "resources/demo/config.yaml").read_text())
    config["studies"] = [study]
    config["models"] = {name: entry for name, entry in config["models"].items() if entry["kind"] == kind}
    listed = config["lpaqa"].get("models")  # the demo lists LPAQA's models (SmolLM2 is not one)
    config["lpaqa"]["models"] = [name for name in listed if name in config["models"]] or None if listed else listed
    (project / f"{study}-{kind}.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return f"{study}-{kind}.yaml"


@pytest.mark.parametrize("study, kind", ALONE)
def test_a_study_left_out_of_studies_never_stops_the_others(tmp_path, study, kind):
    """Issue 44 item 8: the other studies' rules and helpers are not read. A config of causal
    models only (studies: [comps], a GPT) was refused as it was read: IndexError in LPAQA's
    uhn_model(), which picked LPAQA's first masked model whether or not LPAQA ran."""
    project = copy_project(tmp_path)
    configfile = alone_config(project, study, kind)
    counts = dry_run_counts(project, "--configfile", configfile)
    assert counts.pop("all") == "1" and counts["total"] != "0", counts
    assert {r.split("_", 1)[0] for r in counts} - {"total", "table", "train", "download", "wikidata"} == {study}, counts
    # an unlisted study's target says how to run it, instead of planning nothing or failing later
    other = next(name for name, _ in ALONE if name != study)
    result = snakemake(project, other, "-n", "--configfile", configfile, check=False)
    assert result.returncode != 0
    assert f"snakemake {other}: config studies lists {study}, not {other}" in result.stdout + result.stderr


def test_comps_alone_with_a_causal_model_runs(tmp_path):
    """Issue 44 item 8's case run for real (cheap: one tiny GPT trained for a few steps): COMPS's
    tables and the model's scores, and no job of another study."""
    project = copy_project(tmp_path)
    config = yaml.safe_load((project / alone_config(project, "comps", "causal")).read_text())
    config["models"] = {name: entry for name, entry in config["models"].items() if "train" in entry}  # no SmolLM2
    for entry in config["models"].values():
        entry["train"]["steps"] = 20
    (project / "comps-causal.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    result = snakemake(project, "--configfile", "comps-causal.yaml")
    assert {rule.split("_", 1)[0] for rule in executed_rules(result)} == {"comps", "table", "train"}
    accuracy = pd.read_csv(project / "results/comps/tables/accuracy.csv")
    assert set(accuracy["model"]) == {"tiny-demo-gpt"}
    assert (project / "results/comps/scores/tiny-demo-gpt.parquet").is_file()


@pytest.mark.parametrize(
    "edit_config, message",
    [
        (lambda c: c["scoring"].update(batch_sise=3), "config scoring.batch_sise: unknown key"),
        (lambda c: c.update(modles={}), "config modles: unknown key"),
        (lambda c: c["models"]["tiny-demo-bert"].pop("kind"), "config models.tiny-demo-bert: 'kind' is a required"),
        (
            lambda c: c["models"]["tiny-demo-bert"].update(hub_id="bert-base-cased"),
            "config models.tiny-demo-bert: give exactly one of hub_id, path, gguf, pypi or train",
        ),
        (lambda c: c["lpaqa"]["lama"].update(data="resources/nowhere"), "config lpaqa.lama.data: directory"),
        (lambda c: c["wikidata"].update(path="resources/nowhere.json.gz"), "config wikidata.path: file"),
        (lambda c: c["wikidata"].update(chunks=0), "config wikidata.chunks: 0 is less than the minimum of 1"),
        (
            lambda c: c["lpaqa"]["paraphrase"]["forward"].update(hub_id="facebook/wmt19-en-de"),
            "config lpaqa.paraphrase.forward: give exactly one",
        ),
        (
            lambda c: c["lpaqa"]["paraphrase"].update(seed_model="bert-base-cased"),
            "config lpaqa.paraphrase.seed_model: 'bert-base-cased' is not a model LPAQA probes",
        ),
        (lambda c: c["lpaqa"]["paraphrase"].update(beams=0), "config lpaqa.paraphrase.beams"),
        # issue 52: a model of a kind a part cannot take is one line naming the part and the kinds
        (
            lambda c: c["lpaqa"].update(uhn={"model": "tiny-demo-gpt"}),
            "config lpaqa.uhn.model: 'tiny-demo-gpt' is a causal model; LAMA-UHN's person-name filter (LPAQA) "
            "takes masked models",
        ),
        (
            lambda c: c["lpaqa"]["refine"].update(model="tiny-demo-gpt"),
            "config lpaqa.refine.model: 'tiny-demo-gpt' is a causal model; LPAQA's refinement (mask-predict) takes "
            "masked models",
        ),
        (
            lambda c: c["lpaqa"].update(
                probe={"scores": {"masked": ["statement"]}, "top_k": 20}, refine={"model": "tiny-demo-bert"}
            ),
            "config lpaqa.refine.model: 'tiny-demo-bert' is not a model LPAQA probes under the mask score (none;",
        ),
        (
            lambda c: c["lpaqa"].update(probe={"scores": {"causal": ["mask"]}}),
            "config lpaqa.probe.scores.causal.0: 'mask' is not one of",
        ),
        (lambda c: c["lpaqa"].update(models=["gpt2"]), "config lpaqa.models: 'gpt2' is not a key of models"),
        # issue 17: an unknown top-level key printed the whole schema and config (1,311 lines)
        (lambda c: c.update(studys=["lpaqa"]), "config studys: unknown key (allowed here:"),
        (lambda c: c["lpaqa"]["demo_corpus"].update(holdout=1.5), "config lpaqa.demo_corpus.holdout: 1.5 is greater"),
        (lambda c: c["models"]["tiny-demo-bert"].update(train=5), "config models.tiny-demo-bert.train: 5 is not any"),
        (lambda c: c["stest"].update(few_shot={"k": 0}), "config stest.few_shot.k: 0 is less than the minimum"),
        (lambda c: c["stest"].update(models=["nobody"]), "config stest.models: 'nobody' is not a key of models"),
        # issue 18: the full run would stop at mining after ~165 GB of downloads; now before anything
        (
            lambda c: c["lpaqa"]["mining"].update(dependency=True, spacy_model="en_core_web_nothere"),
            "config lpaqa.mining.spacy_model: spaCy pipeline 'en_core_web_nothere' is not installed",
        ),
        # issue 18: the translation backend is checked as the DAG is built, not at paraphrasing
        (
            lambda c: c["lpaqa"]["paraphrase"].update(backend="fairseq"),
            "config lpaqa.paraphrase.backend: fairseq is not importable here; run with --sdm conda",
        ),
        (lambda c: c["comps"].update(models=["nobody"]), "config comps.models: 'nobody' is not a key of models"),
        (lambda c: c["comps"].update(build={"positives": 0}), "config comps.build.positives: 0 is less than"),
        (lambda c: c["comps"].update(norms="resources/nowhere"), "config comps.norms: directory resources/nowhere"),
        # issue 44, item 10: 10**9 chunks hung the dry run; nested YAML aliases (yaml.safe_dump
        # writes shared lists as anchors and aliases) printed a "line" of 152 MB; a long name whole
        (
            lambda c: c["wikidata"].update(chunks=10**9),
            "config wikidata.chunks: 1000000000 is greater than the maximum of 1024",
        ),
        (lambda c: c["scoring"].update(max_length=nested_lists(8)), "config scoring.max_length: [[[[[[[['lol'"),
        (lambda c: c["lpaqa"].update(models=["x" * 5000]), "config lpaqa.models: '" + "x" * 199 + "... is not a key"),
    ],
)
def test_config_mistakes_fail_before_anything_runs(tmp_path, edit_config, message):
    project = copy_project(tmp_path)
    config = yaml.safe_load((project / "resources/demo/config.yaml").read_text())
    edit_config(config)
    (project / "bad.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    result = snakemake(project, "--configfile", "bad.yaml", check=False)
    assert result.returncode != 0
    assert message in result.stdout + result.stderr
    # one line naming the key, with Snakemake's few lines of where (never the schema or the config)
    assert len((result.stdout + result.stderr).strip().splitlines()) <= 6, result.stdout + result.stderr
    assert max(len(line) for line in (result.stdout + result.stderr).splitlines()) < 600
    assert not (project / "results").exists()


def nested_lists(levels: int):
    """A list of 9 copies of a list of 9 copies ... of "lol", ``levels`` deep: a few lines as YAML."""
    value = ["lol"] * 9
    for _ in range(levels - 1):
        value = [value] * 9
    return value


def run_in_terminal(cwd: Path, *args: str) -> str:
    """Snakemake's output when its stdout and stderr are a terminal (a pseudo-terminal, 120 columns)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "snakemake", "--cores", "2", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TERM": "xterm-256color", "COLUMNS": "120"},
    )
    os.close(follower)
    chunks = []
    with contextlib.suppress(OSError):  # EIO once the last writer is gone
        while chunk := os.read(leader, 65536):
            chunks.append(chunk)
    os.close(leader)
    assert process.wait(timeout=300) == 0, b"".join(chunks).decode(errors="replace")[-4000:]
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(chunks).decode(errors="replace"))


def test_a_terminal_shows_the_runs_progress_and_a_file_gets_one_line_per_event(tmp_path):
    """Issue 18: the terminal showed nothing but Snakemake's "N of M steps" between jobs. In a
    terminal the default profile turns on knowprobe's live display (built on snakemake-logger-plugin-rich); output
    into a file or a pipe keeps Snakemake's plain lines (what the tests and SLURM's job logs read)."""
    pytest.importorskip("snakemake_logger_plugin_rich")
    project = copy_project(tmp_path)
    target = "results/lpaqa/prompts/manual.parquet"
    shown = run_in_terminal(project, target, *DEMO)
    assert "─ knowprobe ─" in shown and "rules finished" in shown and "lpaqa manual prompts" in shown
    assert "Workflow Finished" in shown and "localrule lpaqa_manual_prompts:" not in shown
    piped = snakemake(project, target, "--forcerun", "lpaqa_manual_prompts", *DEMO)  # targets before --forcerun
    assert executed_rules(piped) == {"lpaqa_manual_prompts"}
    assert "─ knowprobe ─" not in piped.stdout + piped.stderr and "rules finished" not in piped.stderr
    assert "1 of 1 steps (100%) done" in piped.stderr


def test_a_job_whose_python_lacks_knowprobe_imports_the_workflows_own(tmp_path):
    """A rule's script sits in its study's folder (workflow/scripts/<study>/), out of reach of
    the package beside them; a job's Python that has not installed knowprobe (a conda env's, a
    cluster node's) must still import it, from this workflow. Run here by a Python that sees every
    package of this environment but knowprobe's editable install (its .pth file is not read)."""
    import sysconfig
    import venv

    project = copy_project(tmp_path / "project")
    bare = tmp_path / "bare"
    venv.create(bare, with_pip=False)
    python = bare / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], capture_output=True, text=True
    ).stdout.strip()
    (Path(site) / "outer.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    assert subprocess.run([python, "-c", "import knowprobe"], env=env, capture_output=True).returncode != 0
    assert subprocess.run([python, "-c", "import snakemake, pyarrow"], env=env, capture_output=True).returncode == 0
    result = subprocess.run(
        [python, "-m", "snakemake", "results/wikidata/dump.json", "--cores", "1"]
        + ["--configfile", "resources/demo/config.yaml"],
        cwd=project,
        env={**env, "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads((project / "results/wikidata/dump.json").read_text())


def test_slurm_profile_sends_gpu_rules_to_gpu_nodes(tmp_path):
    pytest.importorskip("snakemake_executor_plugin_slurm")
    gpu_rules = {name for _, name, body in smk_rules() if re.search(r"^\s+gpu=1,$", body, re.MULTILINE)}
    assert {
        "lpaqa_probe",
        "lpaqa_paraphrase",
        "lpaqa_selection",
        "lpaqa_backward",
        "lpaqa_refine",
        "stest_probe",
        "comps_probe",
        "bear_probe",
    } <= gpu_rules
    profile = yaml.safe_load((ROOT / "profiles/slurm/config.yaml").read_text())
    assert {r for r, s in profile["set-resources"].items() if s.get("gpu") == 1} == gpu_rules
    project = copy_project(tmp_path)
    result = snakemake(project, "--profile", "profiles/slurm", "-n", *DEMO)
    jobs = re.split(r"\n(?=(?:local)?rule \w+:)", result.stdout + result.stderr)
    on_gpu = [job for job in jobs if re.match(rf"rule ({'|'.join(gpu_rules)}):", job)]
    # LPAQA: 4 runs (the two BERTs' mask runs, the GPT's next-token and statement runs) x 3 (probe
    # jobs: every set but Mine+Para, then Mine+Para; a selection), 2 paraphrase sets, per masked
    # model 2 backward sets and a cross-model job, per run a calibration, one refinement, LAMA-UHN;
    # the multi-token facts asked by 3 models; S-TEST: 3 models; COMPS: 3 models; BEAR: 3 models
    counted = collections.Counter(re.match(r"rule (\w+):", job).group(1) for job in on_gpu)
    assert counted["lpaqa_probe"] == counted["lpaqa_probe_seeded"] == counted["lpaqa_selection"] == 4
    assert counted["lpaqa_backward"] == 4 and counted["lpaqa_cross_model"] == 2 and counted["lpaqa_calibration"] == 4
    assert counted["lpaqa_multitoken_probe"] == 3
    assert len(on_gpu) == 4 * 3 + 2 + 2 * 2 + 2 + 4 + 1 + 1 + 3 + 3 + 3 + 3
    assert all("gpu=1" in job and "slurm_partition=gpu" in job for job in on_gpu)
    others = [job for job in jobs if re.match(r"rule (\w+):", job) and job not in on_gpu and "resources:" in job]
    assert others and not any("gpu=1" in job for job in others)


def test_wikidata_download_rule_verifies_the_checksum(tmp_path, mirror):
    url, dated = mirror
    project = copy_project(tmp_path / "project")
    config = yaml.safe_load((project / "resources/demo/config.yaml").read_text())
    config["wikidata"].update(path=None, date="20261116", mirror=url)
    (project / "mirror.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    target = "resources/wikidata/wikidata-20261116-all.json.gz"
    snakemake(project, target, "--configfile", "mirror.yaml")
    assert (project / target).read_bytes() == (dated / "wikidata-20261116-all.json.gz").read_bytes()
    assert "md5 checksum verified" in (project / "logs/download/wikidata-20261116-gz.log").read_text()
    # issue 44, item 6: recorded in the lock file with what it was verified against, for the report
    import hashlib
    import json

    record = json.loads((project / "downloads.lock.json").read_text())["files"][
        f"{url}/20261116/wikidata-20261116-all.json.gz"
    ]
    assert record["md5"] == hashlib.md5((project / target).read_bytes()).hexdigest()
    assert record["verified_against"] == f"Wikimedia's {url}/20261116/wikidata-20261116-md5sums.txt"

    (dated / "wikidata-20261116-all.json.gz").write_bytes(b"corrupted in transit")
    (project / target).unlink()
    result = snakemake(project, target, "--configfile", "mirror.yaml", check=False)
    assert result.returncode != 0
    assert "does not match" in result.stderr and not (project / target).exists()


def test_a_download_rule_holds_a_file_to_the_lock_file(tmp_path, mirror):
    """Issue 44, item 6: LAMA's vocabulary (like data.zip, the releases, the norms, WordNet and
    GloVe) was used as it arrived. Its first download is recorded in downloads.lock.json; a later
    one that brings other bytes stops with one line naming the file and both digests."""
    import hashlib
    import json

    url, dated = mirror
    (dated / "common_vocab_cased.txt").write_text("Paris\nFrance\n")
    project = copy_project(tmp_path / "project")
    config = yaml.safe_load((project / "resources/demo/config.yaml").read_text())
    config["lpaqa"]["lama"]["common_vocab"] = f"{url}/20261116/common_vocab_cased.txt"
    (project / "mirror.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    target = "resources/lama/common_vocab_cased.txt"
    snakemake(project, target, "--configfile", "mirror.yaml")
    record = json.loads((project / "downloads.lock.json").read_text())["files"][
        f"{url}/20261116/common_vocab_cased.txt"
    ]
    digest = hashlib.sha256(b"Paris\nFrance\n").hexdigest()
    assert record["sha256"] == digest and record["bytes"] == 13 and record["file"] == target

    (dated / "common_vocab_cased.txt").write_text("Paris\nGermany\n")
    (project / target).unlink()
    result = snakemake(project, target, "--configfile", "mirror.yaml", check=False)
    found = hashlib.sha256(b"Paris\nGermany\n").hexdigest()
    assert result.returncode != 0 and not (project / target).exists()
    assert f"knowprobe error: {target}: sha256 {found} does not match {digest} from the lock file" in result.stderr


def test_a_model_declared_of_the_wrong_kind_is_refused_as_the_dag_is_built(tmp_path):
    import json

    project = copy_project(tmp_path)
    (project / "gpt").mkdir()
    (project / "gpt/config.json").write_text(json.dumps({"model_type": "gpt2"}))
    for name in ("vocab.json", "merges.txt", "model.safetensors"):  # present, as a saved model's are
        (project / "gpt" / name).write_text("")
    config = yaml.safe_load((project / "resources/demo/config.yaml").read_text())
    config["models"]["local-gpt"] = {"kind": "masked", "path": "gpt"}
    (project / "bad.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    result = snakemake(project, "-n", "--configfile", "bad.yaml", check=False)
    assert result.returncode != 0
    assert (
        "config models.local-gpt.kind: masked, but model_type 'gpt2' is not a masked language model; "
        "it is a causal LM: kind: causal" in result.stdout + result.stderr
    )


def test_a_run_whose_downloads_do_not_fit_stops_before_any_job(tmp_path, mirror):
    """The sizes the servers announce are summed as the run starts (onstart), before the first
    download: a dump larger than the free space stops the run with one line, nothing fetched."""
    url, dated = mirror
    with open(dated / "wikidata-20261116-all.json.gz", "r+b") as dump:
        dump.truncate(15 * 10**12)  # a sparse 15 TB file: the mirror announces it, the disk holds none
    project = copy_project(tmp_path / "project")
    config = yaml.safe_load((project / "resources/demo/config.yaml").read_text())
    config["wikidata"].update(path=None, date="20261116", mirror=url)
    (project / "mirror.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    target = "resources/wikidata/wikidata-20261116-all.json.gz"
    result = snakemake(project, target, "--configfile", "mirror.yaml", check=False)
    assert result.returncode != 0
    line = next(line for line in result.stderr.splitlines() if "GB free" in line)
    assert "resources/:" in line and "downloads 15000.0 GB (wikidata-20261116-all.json.gz 15000.0 GB)" in line
    assert "give local copies" in line and "Traceback" not in result.stderr
    assert not (project / "resources/wikidata").exists() or not any((project / "resources/wikidata").iterdir())
    assert "rule download_wikidata:" not in result.stdout + result.stderr  # no job started


@pytest.mark.parametrize("offline", [True, False], ids=["HF_HUB_OFFLINE", "hub_unreachable"])
def test_a_hub_model_out_of_reach_stops_the_run_before_any_job(tmp_path, offline):
    """Issue 39: a hub model that cannot be had (HF_HUB_OFFLINE and not in the hub's cache; or the
    hub not answering) stops the run as it starts, with one line saying what to do, before any job
    (it retried for half a minute, let 4 jobs run and failed 70 s in)."""
    project = copy_project(tmp_path / "project")
    config = yaml.safe_load((project / "resources/demo/config.yaml").read_text())
    config["models"]["hub-bert"] = {"kind": "masked", "hub_id": "nobody/not-cached-bert"}
    (project / "hub.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    env = {"HF_HOME": str(tmp_path / "hf")}  # an empty cache
    if not offline:  # a hub that refuses every connection (a closed port on the loopback)
        env.update(HF_HUB_OFFLINE="0", HF_ENDPOINT="http://127.0.0.1:9")
    result = snakemake(project, "--configfile", "hub.yaml", check=False, env=env)
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "Traceback" not in output
    line = next(line for line in output.splitlines() if "hub" in line and "models.hub-bert" in line)
    if offline:
        assert "HF_HUB_OFFLINE is set and the hub's cache" in line and "lacks 1 of this run's 1 hub models" in line
    else:
        assert "the Hugging Face hub (http://127.0.0.1:9) cannot be reached" in line
    assert "a `path` to its save_pretrained directory" in line
    assert not executed_rules(result) and not (project / "logs").exists()  # no job started
    assert not (project / "results").exists()


def test_gitignore_covers_every_download_directory():
    """Issue 18: downloads (dumps, models, releases) must never show up in `git status`."""
    rules_text = "\n".join(path.read_text() for path in (ROOT / "workflow/rules").rglob("*.smk"))
    directories = set(re.findall(r'"(resources/[a-z_]+)/', rules_text)) - {"resources/papers"}  # ours, tracked
    ignored = {line.strip().rstrip("/") for line in (ROOT / ".gitignore").read_text().splitlines()}
    assert directories and directories <= ignored, sorted(directories - ignored)
