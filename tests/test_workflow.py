"""The workflow end to end on the embedded demo: runs, reruns, interruptions, lint, dry run, errors.

Each test works in a copy of the project in a temporary directory, so the checkout stays clean.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import ROOT, require_shared

pytestmark = pytest.mark.workflow

DEMO = ["--configfile", "resources/demo/config.yaml"]
PROJECT_FILES = ["Snakefile", "config.yaml", "workflow", "profiles", "envs", "resources/demo"]
TABLES = ["baseline.md", "baseline.csv", "baseline.tex", "per_relation.csv", "dropped_facts.csv"]
RULE_LINE = re.compile(r"^(?:local)?rule (\w+):$", re.MULTILINE)


def copy_project(dest: Path) -> Path:
    for name in PROJECT_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def snakemake(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "2", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return result


def executed_rules(result: subprocess.CompletedProcess) -> set[str]:
    return set(RULE_LINE.findall(result.stdout + result.stderr)) - {"all"}


def read_tables(project: Path) -> dict[str, bytes]:
    return {name: (project / "results" / "tables" / name).read_bytes() for name in TABLES}


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """A finished demo run."""
    project = copy_project(tmp_path_factory.mktemp("demo"))
    snakemake(project, *DEMO)
    return project


def test_demo_writes_the_baseline_tables(demo):
    summary = pd.read_csv(demo / "results/tables/baseline.csv")
    assert summary["method"].tolist() == ["Majority", "Man"]
    assert {"T-REx micro", "T-REx macro", "Google-RE micro", "Google-RE macro"} <= set(summary.columns)
    assert summary["T-REx relations"].tolist() == [6, 6]  # P1376 has no T-REx file, as in LAMA
    per_relation = pd.read_csv(demo / "results/tables/per_relation.csv")
    assert ["model", "prompt_set", "relation", "n_facts", "micro", "macro"] == [
        c for c in per_relation.columns if c in {"model", "prompt_set", "relation", "n_facts", "micro", "macro"}
    ]
    # every fact is either probed or counted as dropped, per dataset
    dropped = pd.read_csv(demo / "results/tables/dropped_facts.csv")
    for dataset in ["trex", "google_re"]:
        imported = len(pd.read_parquet(demo / f"results/facts/{dataset}.parquet"))
        probed = pd.read_parquet(demo / f"results/probe/tiny-demo-bert/manual/{dataset}.parquet")
        assert len(probed) + dropped.loc[dropped["dataset"] == dataset, "n"].sum() == imported
    assert set(dropped["reason"]) == {"not_one_token", "not_candidate", "judgments"}
    markdown = (demo / "results/tables/baseline.md").read_text()
    assert "| tiny-demo-bert | Man |" in markdown
    for log in ["train_demo_model/tiny-demo-bert.log", "probe/tiny-demo-bert/manual/trex.log", "tables.log"]:
        assert (demo / "logs" / log).stat().st_size > 0
    assert "probe: 100%" in (demo / "logs/probe/tiny-demo-bert/manual/trex.log").read_text()


def test_demo_builds_trex_train_from_its_wikidata_dump(demo):
    rejects = pd.read_csv(demo / "results/wikidata/rejects.csv")
    assert set(rejects["kind"]) == {"invalid_json", "no_english_label", "value_not_item", "no_value", "deprecated"}
    assert sorted(rejects["chunk"].unique()) <= [0, 1, 2]
    entities = pd.read_parquet(demo / "results/wikidata/entities.parquet")
    assert set(entities["label_lang"]) == {"en", "mul"}
    train = pd.read_parquet(demo / "results/facts/trex_train.parquet")
    test = pd.read_parquet(demo / "results/facts/trex.parquet")
    assert len(train) > 50
    assert not set(zip(train["sub_uri"], train["obj_uri"])) & set(zip(test["sub_uri"], test["obj_uri"]))
    words = set(pd.read_parquet(demo / "results/vocab/tiny-demo-bert.parquet")["word"])
    assert set(train["obj_label"]) <= words
    assert train.groupby("relation").size().max() <= 25  # trex_train.per_relation of the demo
    stats = pd.read_csv(demo / "results/tables/trex_train_stats.csv")
    assert stats["LPAQA (Table 1)"].tolist() == [948.7, 880.1, 354.6, 4.4]


def test_demo_mines_prompts_from_its_wikipedia_dump_and_probes_them(demo):
    counts = pd.read_csv(demo / "results/mining/extract_counts.csv").groupby("what")["count"].sum()
    assert counts["articles"] == 62 and counts["redirects"] == 19 and counts["other_namespace"] == 1
    matches = pd.read_parquet(demo / "results/mining/matches.parquet")
    assert {"link", "label"} <= set(matches["obj_how"]) | set(matches["sub_how"])
    train = pd.read_parquet(demo / "results/facts/trex_train.parquet")
    assert set(zip(matches["sub_uri"], matches["obj_uri"])) <= set(zip(train["sub_uri"], train["obj_uri"]))
    mine = pd.read_parquet(demo / "results/prompts/mine.parquet")
    assert set(mine["source"]) == {"mid"}  # offline: no spaCy pipeline, middle-word prompts only
    assert "[Y] is the capital of [X] ." in set(mine.loc[mine["relation"] == "P36", "template"])
    assert "middle-word prompts only" in (demo / "logs/mining/mine.log").read_text()
    assert "middle-word only" in (demo / "results/tables/mined_prompts.md").read_text()
    mine_man = pd.read_parquet(demo / "results/prompts/mine_man.parquet")
    manual = pd.read_parquet(demo / "results/prompts/manual.parquet")

    def pairs(frame):
        return set(zip(frame["relation"], frame["template"]))

    assert pairs(mine_man) == pairs(mine) | pairs(manual) and len(mine_man) == len(pairs(mine_man))
    metrics = pd.read_parquet(demo / "results/metrics/tiny-demo-bert/mine/trex.parquet")
    assert len(metrics) == len(
        mine[mine["relation"].isin(pd.read_parquet(demo / "results/facts/trex.parquet")["relation"])]
    )


def test_demo_paraphrases_manual_and_best_mined_prompts_and_probes_them(demo):
    stats = pd.read_csv(demo / "results/tables/paraphrase_stats.csv").set_index("seed_set")
    manual = pd.read_parquet(demo / "results/prompts/manual.parquet")
    assert stats.loc["manual", "seeds"] == len(manual)
    for seed_set, prompt_set in [("manual", "man_para"), ("mine", "mine_para")]:
        candidates = pd.read_parquet(demo / f"results/paraphrase/{prompt_set}/candidates.parquet")
        assert candidates.groupby(["relation", "seed"]).size().eq(7 * 7).all()  # B² with the demo's B=7
        assert stats.loc[seed_set, "candidates"] == len(candidates)
        assert stats.loc[seed_set, "placeholder_broken"] == candidates["problem"].str.contains("stand-in|slots").sum()
        prompts = pd.read_parquet(demo / f"results/prompts/{prompt_set}.parquet")
        assert len(prompts) == stats.loc[seed_set, "kept"] > 0
        assert not prompts.duplicated(["relation", "template"]).any()
        assert all(t.count("[X]") == 1 and t.count("[Y]") == 1 for t in prompts["template"])
        assert prompts.groupby("relation")["score"].apply(lambda s: s.is_monotonic_decreasing).all()
        assert set(prompts["source"]) == {f"paraphrase-of-{seed_set}"}
    # Mine+Para's seeds are mined prompts, each the best of its relation on T-REx-train
    seeds = pd.read_parquet(demo / "results/paraphrase/seeds/mine.parquet")
    train = pd.read_parquet(demo / "results/metrics/tiny-demo-bert/mine/trex_train.parquet")
    best = train.groupby("relation")["micro"].max()
    assert all(seed.score == best[seed.relation] for seed in seeds.itertuples())
    assert set(zip(seeds["relation"], seeds["template"])) <= set(zip(train["relation"], train["template"]))
    for dataset in ["trex", "google_re"]:
        assert (demo / f"results/metrics/tiny-demo-bert/man_para/{dataset}.parquet").exists()
    assert "denoising copy model" in (demo / "logs/train_demo_translator/forward.log").read_text()


def test_interrupted_run_resumes_and_gives_identical_tables(demo, tmp_path):
    """Ctrl-C during training, then the same command: it completes, with the tables of an uninterrupted run."""
    project = copy_project(tmp_path)
    output = tmp_path / "interrupted.log"
    # a shell starts background commands with SIGINT ignored, and that is inherited: restore the
    # default, as in the terminal of a user who presses Ctrl-C
    process = subprocess.Popen(
        [sys.executable, "-m", "snakemake", "--cores", "2", *DEMO],
        cwd=project,
        stdout=output.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    train_log = project / "logs/train_demo_model/tiny-demo-bert.log"
    deadline = time.time() + 240
    while time.time() < deadline and not (train_log.exists() and "step 500" in train_log.read_text()):
        assert process.poll() is None, "the run ended before training got going"
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGINT)  # what a terminal sends on Ctrl-C
    assert process.wait(timeout=120) != 0, output.read_text()[-3000:]
    assert not (project / "results/models/tiny-demo-bert/config.json").exists(), "a half-trained model was left"
    assert not (project / "results/tables").exists()
    snakemake(project, *DEMO)
    assert read_tables(project) == read_tables(demo)  # also: two runs from scratch agree exactly


def test_changed_stage_reruns_only_itself_and_what_depends_on_it(demo, tmp_path):
    project = tmp_path / "project"
    shutil.copytree(demo, project, symlinks=True)  # results and provenance records included
    probe_output = project / "results/probe/tiny-demo-bert/manual/trex.parquet"
    before = probe_output.stat().st_mtime_ns

    assert executed_rules(snakemake(project, *DEMO)) == set(), "a finished run should have nothing to do"

    with open(project / "workflow/scripts/knowprobe/metrics.py", "a") as handle:
        handle.write("\n# an edit of the metrics stage\n")
    ran = executed_rules(snakemake(project, *DEMO))
    # Mine+Para's seeds are chosen by T-REx-train P@1, so that set is paraphrased and probed again;
    # no other probe runs
    assert ran == {
        "evaluate",
        "majority",
        "tables",
        "select_paraphrase_seeds",
        "paraphrase",
        "paraphrase_stats",
        "probe",
    }
    assert probe_output.stat().st_mtime_ns == before

    with open(project / "workflow/scripts/knowprobe/probe.py", "a") as handle:
        handle.write("\n# an edit of the probing stage\n")
    ran = executed_rules(snakemake(project, *DEMO))
    # Mine+Para's seeds are chosen by probing the mined prompts on T-REx-train
    assert ran == {"probe", "evaluate", "tables", "select_paraphrase_seeds", "paraphrase", "paraphrase_stats"}
    assert probe_output.stat().st_mtime_ns != before
    assert read_tables(project) == read_tables(demo)

    # the Wikidata stages: the parse, T-REx-train and what was mined with them; not the demo model
    # nor the fact filter, nor the Wikipedia extraction
    downstream = {
        "trex_train",
        "trex_train_stats",
        "distant_supervision",
        "mine_prompts",
        "mine_man_prompts",
        "probe",
        "evaluate",
        "filter_facts",
        "select_paraphrase_seeds",
        "paraphrase",
        "paraphrase_stats",
    }
    with open(project / "workflow/scripts/knowprobe/wikidata.py", "a") as handle:
        handle.write("\n# an edit of the Wikidata stage\n")
    planned = executed_rules(snakemake(project, "-n", *DEMO))
    assert planned == {"wikidata_index", "wikidata_chunk", "wikidata_gather"} | downstream
    with open(project / "workflow/scripts/knowprobe/mining.py", "a") as handle:
        handle.write("\n# an edit of the mining stage\n")
    manual_probe = project / "results/probe/tiny-demo-bert/manual/trex.parquet"
    manual_before = manual_probe.stat().st_mtime_ns
    ran = executed_rules(snakemake(project, *DEMO))
    assert ran == planned
    assert manual_probe.stat().st_mtime_ns == manual_before  # only the mined prompt sets were probed again
    assert executed_rules(snakemake(project, "-n", *DEMO)) == set()

    # a parameter of one stage: only that stage and its dependents would run
    config = yaml.safe_load((project / "resources/demo/config.yaml").read_text())
    config["probe"]["top_k"] = 10
    (project / "changed.yaml").write_text(yaml.safe_dump(config))
    planned = executed_rules(snakemake(project, "-n", "--configfile", "changed.yaml"))
    assert planned == {"probe", "evaluate", "tables", "select_paraphrase_seeds", "paraphrase", "paraphrase_stats"}

    # the paraphrase stage (and the demo translators, which share its stand-in code): both
    # paraphrase sets and their probes, nothing of mining or the manual baseline
    module = project / "workflow/scripts/knowprobe/paraphrase.py"
    original, stamp = module.read_text(), module.stat()
    module.write_text(original + "\n# an edit of the paraphrase stage\n")
    paraphrase_jobs = {
        "train_demo_translator",
        "select_paraphrase_seeds",
        "paraphrase",
        "paraphrase_stats",
        "probe",
        "evaluate",
    }
    result = snakemake(project, "-n", *DEMO)
    assert executed_rules(result) == paraphrase_jobs
    probed = set(re.findall(r"prompt_set=(\w+), dataset=(\w+)", result.stdout + result.stderr))
    assert probed == {("man_para", "trex"), ("man_para", "google_re"), ("mine_para", "trex")}
    module.write_text(original)  # undone, with its old time stamp: nothing to do again
    os.utime(module, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert executed_rules(snakemake(project, "-n", *DEMO)) == set()
    # a parameter of the stage: the paraphrase jobs and their probes, not the translators
    config = yaml.safe_load((project / "resources/demo/config.yaml").read_text())
    config["paraphrase"]["top"] = 5
    (project / "fewer.yaml").write_text(yaml.safe_dump(config))
    planned = executed_rules(snakemake(project, "-n", "--configfile", "fewer.yaml"))
    assert planned == paraphrase_jobs - {"train_demo_translator", "select_paraphrase_seeds"}


def test_report_shows_the_tables(demo):
    snakemake(demo, *DEMO, "--report", "report.html")
    html = (demo / "report.html").read_text(errors="replace")
    assert "baseline.csv" in html and "per_relation.csv" in html


def test_lint_is_clean():
    for config in ([], DEMO):
        result = snakemake(ROOT, "--lint", *config)
        assert "Lints for" not in result.stdout + result.stderr


def test_default_config_dry_run_builds_the_whole_dag_without_downloading(tmp_path):
    project = copy_project(tmp_path)
    result = snakemake(project, "-n", "--quiet", "rules")
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", result.stdout + result.stderr, re.MULTILINE))
    assert counts["download_lama"] == "1" and counts["download_model"] == "2"
    assert counts["tables"] == "1"
    assert counts["download_wikidata"] == "1" and counts["wikidata_chunk"] == "16" and counts["trex_train"] == "1"
    assert counts["download_wikipedia"] == "1" and counts["wikipedia_extract"] == "32"
    assert counts["distant_supervision"] == "32" and counts["mine_prompts"] == "1"
    # 2 models x (manual, man_para x 2 datasets + mine, mine_man, mine_para x T-REx), and the seed
    # model's mined prompts on T-REx-train (Mine+Para's seeds)
    assert counts["probe"] == "15"
    assert counts["download_translator"] == "2" and counts["paraphrase"] == "2"
    for downloaded in [
        "resources/lama",
        "resources/models",
        "resources/wikidata",
        "resources/wikipedia",
        "resources/translators",
    ]:
        assert not (project / downloaded).exists()


def test_fairseq_backend_needs_no_translator_download(tmp_path):
    project = copy_project(tmp_path)
    config = yaml.safe_load((project / "config.yaml").read_text())
    config["paraphrase"]["backend"] = "fairseq"
    (project / "fairseq.yaml").write_text(yaml.safe_dump(config))
    result = snakemake(project, "-n", "--quiet", "rules", "--configfile", "fairseq.yaml")
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", result.stdout + result.stderr, re.MULTILINE))
    assert counts["paraphrase"] == "2" and "download_translator" not in counts


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda c: c["probe"].update(batch_sise=3), "batch_sise"),
        (lambda c: c.update(modles={}), "modles"),
        (lambda c: c["models"]["tiny-demo-bert"].update(hub_id="bert-base-cased"), "models.tiny-demo-bert"),
        (lambda c: c["lama"].update(data="resources/nowhere"), "lama.data"),
        (lambda c: c["wikidata"].update(path="resources/nowhere.json.gz"), "wikidata.path"),
        (lambda c: c["wikidata"].update(chunks=0), "chunks"),
        (lambda c: c["paraphrase"]["forward"].update(hub_id="facebook/wmt19-en-de"), "paraphrase.forward"),
        (lambda c: c["paraphrase"].update(seed_model="bert-base-cased"), "paraphrase.seed_model"),
        (lambda c: c["paraphrase"].update(beams=0), "beams"),
    ],
)
def test_config_mistakes_fail_before_anything_runs(tmp_path, edit, message):
    project = copy_project(tmp_path)
    config = yaml.safe_load((project / "resources/demo/config.yaml").read_text())
    edit(config)
    (project / "bad.yaml").write_text(yaml.safe_dump(config))
    result = snakemake(project, "--configfile", "bad.yaml", check=False)
    assert result.returncode != 0
    assert message in result.stdout + result.stderr
    assert not (project / "results").exists()


def test_bad_fact_line_is_a_one_line_error_naming_file_and_line(tmp_path):
    project = copy_project(tmp_path)
    path = project / "resources/demo/lama/TREx/P36.jsonl"
    lines = path.read_text().splitlines()
    lines[2] = lines[2][:40]
    path.write_text("\n".join(lines) + "\n")
    result = snakemake(project, "results/facts/trex.parquet", *DEMO, check=False)  # --configfile takes several values
    assert result.returncode != 0
    assert "knowprobe error: resources/demo/lama/TREx/P36.jsonl:3: not valid JSON" in result.stderr
    assert "Traceback" not in (project / "logs/import_facts/trex.log").read_text()
    assert not (project / "results/facts/trex.parquet").exists()


def test_real_lama_files_flow_through_the_workflow(tmp_path):
    """LAMA's own relations, T-REx and Google-RE files, probed with a tiny random BERT given by path."""
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    data = require_shared("lama")
    project = copy_project(tmp_path / "project")
    words = (data / "common_vocab_cased.txt").read_text(encoding="utf-8").split("\n")
    extra = ["was", "born", "in", "died", "The", "capital", "of", "is", "a", ".", "(", ")", "[", "]"]
    vocab = list(dict.fromkeys(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [w for w in words if w] + extra))
    tokenizer = BertTokenizerFast(vocab={w: i for i, w in enumerate(vocab)}, do_lower_case=False)
    assert len(tokenizer) == len(vocab) > 21000
    model = BertForMaskedLM(
        BertConfig(
            vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64
        )
    )
    model_dir = tmp_path / "tiny-random-bert"
    model.save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    config = {
        "lama": {"data": str(data), "common_vocab": str(data / "common_vocab_cased.txt")},
        "models": {"tiny-random-bert": {"path": str(model_dir)}},
        "probe": {"device": "cpu", "top_k": 5, "threads": 2},
        "trex_train": {"source": "lpaqa", "lpaqa": str(require_shared("lpaqa", "TREx_train"))},
        "prompt_sets": ["manual"],
    }
    (project / "real.yaml").write_text(yaml.safe_dump(config))
    snakemake(project, "--configfile", "real.yaml")

    summary = pd.read_csv(project / "results/tables/baseline.csv").set_index("method")
    trex_files = sorted((data / "TREx").glob("P*.jsonl"))
    assert summary.loc["Man", "T-REx relations"] == len(trex_files)  # relations without a file are skipped
    assert summary.loc["Man", "Google-RE relations"] == 3
    imported = sum(1 for path in trex_files for line in path.open() if line.strip())
    dropped = pd.read_csv(project / "results/tables/dropped_facts.csv")
    kept = summary.loc["Man", "T-REx facts"]
    assert kept + dropped.loc[dropped["dataset"] == "trex", "n"].sum() == imported
    google_kept = summary.loc["Man", "Google-RE facts"]
    assert google_kept + dropped.loc[dropped["dataset"] == "google_re", "n"].sum() == 2937 + 1825 + 766
    assert kept > 0.9 * imported  # LAMA's objects are all in its common vocabulary
    log = (project / "logs/import_facts/trex.log").read_text()
    assert f"{46 - len(trex_files)} relations of relations.jsonl have no T-REx file" in log
    # LPAQA's released T-REx-train, for the relations of the test set
    train = pd.read_parquet(project / "results/facts/trex_train.parquet")
    assert sorted(train["relation"].unique()) == sorted(p.stem for p in trex_files)
    test = pd.read_parquet(project / "results/facts/trex.parquet")
    assert not set(zip(train["relation"], train["sub_uri"], train["obj_uri"])) & set(
        zip(test["relation"], test["sub_uri"], test["obj_uri"])
    )


def test_slurm_profile_sends_gpu_rules_to_gpu_nodes(tmp_path):
    pytest.importorskip("snakemake_executor_plugin_slurm")
    project = copy_project(tmp_path)
    result = snakemake(project, "--profile", "profiles/slurm", "-n", *DEMO)
    output = result.stdout + result.stderr
    jobs = re.split(r"\n(?=(?:local)?rule \w+:)", output)
    gpu_jobs = [job for job in jobs if re.match(r"rule (probe|paraphrase):", job)]
    assert len(gpu_jobs) == 8 + 2 and all("gpu=1" in job and "slurm_partition=gpu" in job for job in gpu_jobs)
    others = [job for job in jobs if re.match(r"rule (?!probe:|paraphrase:)\w+:", job) and "resources:" in job]
    assert others and not any("gpu=1" in job for job in others)


@pytest.fixture
def mirror(tmp_path):
    """A loopback HTTP server laid out like dumps.wikimedia.org/wikidatawiki/entities/DATE/."""
    import functools
    import hashlib
    import http.server
    import threading

    root = tmp_path / "mirror"
    dated = root / "20261116"
    dated.mkdir(parents=True)
    dump = (ROOT / "resources/demo/wikidata-demo-all.json.gz").read_bytes()
    (dated / "wikidata-20261116-all.json.gz").write_bytes(dump)
    (dated / "wikidata-20261116-md5sums.txt").write_text(
        f"{hashlib.md5(dump).hexdigest()}  wikidata-20261116-all.json.gz\n{'0' * 32}  wikidata-20261116-all.json.bz2\n"
    )
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", dated
    server.shutdown()


def test_wikidata_download_rule_verifies_the_checksum(tmp_path, mirror):
    url, dated = mirror
    project = copy_project(tmp_path / "project")
    config = yaml.safe_load((project / "resources/demo/config.yaml").read_text())
    config["wikidata"].update(path=None, date="20261116", mirror=url)
    (project / "mirror.yaml").write_text(yaml.safe_dump(config))
    target = "resources/wikidata/wikidata-20261116-all.json.gz"
    snakemake(project, target, "--configfile", "mirror.yaml")
    assert (project / target).read_bytes() == (dated / "wikidata-20261116-all.json.gz").read_bytes()
    assert "md5 checksum verified" in (project / "logs/download/wikidata-20261116-gz.log").read_text()

    (dated / "wikidata-20261116-all.json.gz").write_bytes(b"corrupted in transit")
    (project / target).unlink()
    result = snakemake(project, target, "--configfile", "mirror.yaml", check=False)
    assert result.returncode != 0
    assert "does not match" in result.stderr and not (project / target).exists()


def test_wikipedia_download_rule_fetches_dump_and_index_and_verifies_both(tmp_path, mirror):
    import hashlib

    url, dated = mirror
    enwiki = dated.parent / "20261101"
    enwiki.mkdir()
    sums = []
    for name in [
        "enwiki-demo-pages-articles-multistream.xml.bz2",
        "enwiki-demo-pages-articles-multistream-index.txt.bz2",
    ]:
        data = (ROOT / "resources/demo" / name).read_bytes()
        served = name.replace("enwiki-demo", "enwiki-20261101")
        (enwiki / served).write_bytes(data)
        sums.append(f"{hashlib.md5(data).hexdigest()}  {served}")
    (enwiki / "enwiki-20261101-md5sums.txt").write_text("\n".join(sums) + "\n")
    project = copy_project(tmp_path / "project")
    config = yaml.safe_load((project / "resources/demo/config.yaml").read_text())
    config["wikipedia"].update(path=None, index=None, date="20261101", mirror=url, chunks=2)
    (project / "mirror.yaml").write_text(yaml.safe_dump(config))
    snakemake(project, "results/wikipedia/streams.json", "--configfile", "mirror.yaml")
    log = (project / "logs/download/wikipedia-20261101.log").read_text()
    assert log.count("md5 checksum verified") == 2
    streams = json.loads((project / "results/wikipedia/streams.json").read_text())
    assert len(streams["ranges"]) == 2 and all(streams["ranges"])
