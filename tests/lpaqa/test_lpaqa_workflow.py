"""LPAQA's slice end to end on the embedded demo (the shared ``demo`` run), on LAMA's own files,
and its LPAQA-specific runs: fairseq, a broken fact line, the Wikipedia download."""

from __future__ import annotations

import hashlib
import json

import pandas as pd
import pytest
import torch
import yaml

from conftest import DEMO, ROOT, copy_project, require_shared, snakemake

pytestmark = pytest.mark.workflow
RESULTS = "results/lpaqa"


def read(demo, path):
    return pd.read_parquet(demo / RESULTS / path)


def test_demo_writes_the_baseline_tables_and_figure(demo):
    summary = pd.read_csv(demo / RESULTS / "tables/baseline.csv")
    assert summary["method"].tolist() == ["Majority", "Man"] * 4
    # the BERTs under the mask score, the GPT under next_token and statement (lpaqa.probe.scores)
    runs = ["tiny-demo-bert", "tiny-demo-bert-small", "tiny-demo-gpt@next_token", "tiny-demo-gpt@statement"]
    assert summary["model"].tolist() == [run for run in runs for _ in range(2)]
    assert {"T-REx micro", "T-REx macro", "Google-RE micro", "Google-RE macro"} <= set(summary.columns)
    assert summary["T-REx relations"].tolist() == [6] * 8  # P1376 has no T-REx file, as in LAMA
    per_relation = pd.read_csv(demo / RESULTS / "tables/per_relation.csv")
    assert ["model", "prompt_set", "relation", "n_facts", "micro", "macro"] == [
        c for c in per_relation.columns if c in {"model", "prompt_set", "relation", "n_facts", "micro", "macro"}
    ]
    # every fact is either probed or counted as dropped, per dataset
    dropped = pd.read_csv(demo / RESULTS / "tables/dropped_facts.csv")
    dropped = dropped[dropped["model"] == "tiny-demo-bert"]
    for dataset in ["trex", "google_re"]:
        imported = len(read(demo, f"facts/{dataset}/test.parquet"))
        probed = read(demo, f"probe/tiny-demo-bert/manual/{dataset}/test.parquet")
        assert len(probed) + dropped.loc[dropped["dataset"] == dataset, "n"].sum() == imported
    assert set(dropped["reason"]) == {"not_one_token", "not_candidate", "judgments"}
    markdown = (demo / RESULTS / "tables/baseline.md").read_text()
    assert "| tiny-demo-bert | Man |" in markdown
    for log in [
        "train_demo_model/tiny-demo-bert.log",
        "lpaqa/probe/tiny-demo-bert.log",
        "lpaqa/tables.log",
    ]:
        assert (demo / "logs" / log).stat().st_size > 0
    assert "mask: 100%" in (demo / "logs/lpaqa/probe/tiny-demo-bert.log").read_text()
    png, svg = (
        (demo / RESULTS / "figures/baseline_per_relation.png"),
        (demo / RESULTS / "figures/baseline_per_relation.svg"),
    )
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    drawing = svg.read_text()
    assert all(name in drawing for name in ["P36", "P103", "place_of_birth", "Majority", "Man"])


def test_dropping_a_model_from_the_multitoken_facts_reruns_only_their_tables(demo, tmp_path):
    """Adding a model to lpaqa.multitoken.models, or dropping one, reran the facts (their file held
    every model's token counts of the objects) and so every model's multi-token probe; each model
    now counts its own (rule lpaqa_multitoken_object_tokens), and only what sets the models side by
    side reruns."""
    from conftest import copy_demo, executed_rules

    project = copy_demo(demo, tmp_path / "project")
    config = yaml.safe_load((project / "resources/demo/config.yaml").read_text())
    config["lpaqa"]["multitoken"]["models"] = ["tiny-demo-bert", "tiny-demo-gpt"]  # not tiny-demo-bert-small
    (project / "fewer.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    result = snakemake(project, "-n", "--configfile", "fewer.yaml")
    assert executed_rules(result) == {"lpaqa_multitoken_tables", "lpaqa_multitoken_figure", "table_html"}


def test_demo_model_is_trained_on_lpaqas_demo_corpus(demo):
    corpus = read(demo, "demo/corpus.parquet")
    held_out = json.loads((demo / RESULTS / "demo/held_out.json").read_text())["held_out_fact_ids"]
    facts = pd.concat([read(demo, f"facts/{d}/test.parquet") for d in ["trex", "google_re"]])
    assert len(held_out) == round(0.25 * facts["fact_id"].nunique())
    # the corpus states test facts that are not held out and other facts of the Wikidata dump
    # (T-REx-train's, which the paraphrase and selection stages rank on): never a held-out fact
    stated = {(text[start:end], text[:start] + text[end:]) for text, start, end in corpus.itertuples(index=False)}
    for fact in facts[facts["fact_id"].isin(held_out)].itertuples():
        assert not any(obj == fact.obj_label and fact.sub_label in rest for obj, rest in stated), fact
    assert any(obj == fact.obj_label for fact in facts.itertuples() for obj, _ in stated)
    training = json.loads((demo / "results/models/tiny-demo-bert/knowprobe_training.json").read_text())
    # the demo models read every study's part (S-TEST's, COMPS's and BEAR's too)
    parts = sorted((demo / "results").glob("*/demo/corpus.parquet"))
    assert len(parts) == 4 and training["sentences"] == sum(len(pd.read_parquet(part)) for part in parts)


def test_demo_builds_trex_train_from_its_wikidata_dump(demo):
    rejects = pd.read_csv(demo / "results/wikidata/rejects.csv")
    assert set(rejects["kind"]) == {
        "invalid_json",
        "no_english_label",
        "value_not_item",
        "no_value",
        "deprecated",
        "imprecise_date",  # a date known to the decade only: no year to name
    }
    assert set(rejects["chunk"]) <= {0, 1, 2}
    entities = pd.read_parquet(demo / "results/wikidata/entities.parquet")
    assert set(entities["label_lang"]) == {"en", "mul"}
    train = read(demo, "facts/trex/train_dev.parquet")
    test = read(demo, "facts/trex/test.parquet")
    assert len(train) > 50
    assert not set(zip(train["sub_uri"], train["obj_uri"])) & set(zip(test["sub_uri"], test["obj_uri"]))
    words = set(read(demo, "vocab/tiny-demo-bert.parquet")["word"])
    assert set(train["obj_label"]) <= words
    assert train.groupby("relation").size().max() <= 25  # lpaqa.trex_train.per_relation of the demo
    # T-REx's relations and those Google-RE's map to (P19 place of birth, P20, P569 date of birth)
    assert set(train["relation"]) == set(test["relation"]) | {"P19", "P20", "P569"}
    assert train.loc[train["relation"] == "P569", "obj_label"].str.fullmatch(r"\d{4}").all()  # years
    google = read(demo, "facts/google_re/train_dev.parquet")
    assert set(google["relation"]) == {"place_of_birth", "place_of_death", "date_of_birth"}
    stats = pd.read_csv(demo / RESULTS / "tables/table1.csv").set_index(["dataset", "statistic"])
    assert stats.loc[("T-REx-train", "pairs"), "paper"] == 948.7
    assert stats.loc[("T-REx-train", "relations")].eq(len(set(test["relation"]))).all()


def test_demo_mines_prompts_from_its_wikipedia_dump_and_probes_them(demo):
    counts = pd.read_csv(demo / RESULTS / "mining/extract_counts.csv").groupby("what")["count"].sum()
    assert counts["articles"] == 97 and counts["redirects"] == 25 and counts["other_namespace"] == 1
    assert counts["rejected_pages"] == 0 and pd.read_csv(demo / RESULTS / "mining/wikipedia_rejects.csv").empty
    matches = read(demo, "mining/matches.parquet")
    assert {"link", "label"} <= set(matches["obj_how"]) | set(matches["sub_how"])
    train = read(demo, "facts/trex/train_dev.parquet")
    assert set(zip(matches["sub_uri"], matches["obj_uri"])) <= set(zip(train["sub_uri"], train["obj_uri"]))
    mine = read(demo, "prompts/mine.parquet")
    assert set(mine["source"]) == {"mid"}  # offline: no spaCy pipeline, middle-word prompts only
    assert "[Y] is the capital of [X] ." in set(mine.loc[mine["relation"] == "P36", "template"])
    assert "middle-word prompts only" in (demo / "logs/lpaqa/mining/mine.log").read_text()
    assert "middle-word only" in (demo / RESULTS / "tables/mined_prompts.md").read_text()
    mine_man = read(demo, "prompts/mine_man.parquet")
    manual = read(demo, "prompts/manual.parquet")

    def pairs(frame):
        return set(zip(frame["relation"], frame["template"]))

    assert pairs(mine_man) == pairs(mine) | pairs(manual) and len(mine_man) == len(pairs(mine_man))
    metrics = read(demo, "metrics/tiny-demo-bert/mine/trex/test.parquet")
    assert len(metrics) == len(mine[mine["relation"].isin(read(demo, "facts/trex/test.parquet")["relation"])])
    assert set(metrics["split"]) == {"test"}
    # every generated set is probed on T-REx-train (train and dev) as well as on the test sets
    for prompt_set in ["mine", "mine_mid", "mine_man", "man_para", "mine_para", "refined"]:
        for dataset in ["trex", "google_re"]:
            assert (demo / RESULTS / f"probe/tiny-demo-bert/{prompt_set}/{dataset}/train_dev.parquet").exists()


def test_demo_paraphrases_manual_and_best_mined_prompts_and_probes_them(demo):
    stats = pd.read_csv(demo / RESULTS / "tables/paraphrase_stats.csv").set_index("seed_set")
    manual = read(demo, "prompts/manual.parquet")
    assert stats.loc["manual", "seeds"] == len(manual)
    for seed_set, prompt_set in [("manual", "man_para"), ("mine", "mine_para")]:
        candidates = read(demo, f"paraphrase/{prompt_set}/candidates.parquet")
        assert candidates.groupby(["relation", "seed"]).size().eq(7 * 7).all()  # B² with the demo's B=7
        assert stats.loc[seed_set, "candidates"] == len(candidates)
        assert stats.loc[seed_set, "placeholder_broken"] == candidates["problem"].str.contains("stand-in|slots").sum()
        prompts = read(demo, f"prompts/{prompt_set}.parquet")
        assert len(prompts) == stats.loc[seed_set, "kept"] > 0
        assert not prompts.duplicated(["relation", "template"]).any()
        assert all(t.count("[X]") == 1 and t.count("[Y]") == 1 for t in prompts["template"])
        assert prompts.groupby("relation")["score"].apply(lambda s: s.is_monotonic_decreasing).all()
        assert set(prompts["source"]) == {f"paraphrase-of-{seed_set}"}
    # Mine+Para's seeds are mined prompts, each the best of its relation on T-REx-train
    seeds = read(demo, "paraphrase/seeds/mine.parquet")
    train = read(demo, "metrics/tiny-demo-bert/mine/trex/train_dev.parquet")
    best = train.groupby("relation")["micro"].max()
    assert all(seed.score == best[seed.relation] for seed in seeds.itertuples())
    assert set(zip(seeds["relation"], seeds["template"])) <= set(zip(train["relation"], train["template"]))
    for dataset in ["trex", "google_re"]:
        assert (demo / RESULTS / f"metrics/tiny-demo-bert/man_para/{dataset}/test.parquet").exists()
    assert "denoising copy model" in (demo / "logs/lpaqa/train_demo_translator/forward.log").read_text()


def test_gpu_precisions_keep_the_trained_demo_models_answers(demo):
    """The GPU's precisions (the encoder in float16, the default for checkpoints saved in float32
    as these are, or in bfloat16; the LM head and log-softmax in float32), on the CPU, against the
    demo's float32 probe of its trained BERTs: every prompt set on T-REx test. P@1 over all of a
    model's pairs moves by at most 0.1 point, and float16 changes fewer answers than bfloat16."""
    from knowprobe import contracts, scoring
    from knowprobe.devices import saved_dtype
    from knowprobe.lpaqa import probe

    sets = yaml.safe_load((demo / DEMO[-1]).read_text())["lpaqa"]["prompt_sets"]
    for model in ["tiny-demo-bert", "tiny-demo-bert-small"]:
        assert saved_dtype(demo / "results/models" / model) == torch.float32  # so float16 is the GPU's choice
        facts = contracts.read(demo / RESULTS / f"filtered/{model}/trex/test.parquet", contracts.MODEL_FACTS)
        parts = {
            name: (facts, contracts.read(demo / RESULTS / f"prompts/{name}.parquet", contracts.PROMPTS))
            for name in sets
        }
        candidates = contracts.read(demo / RESULTS / f"vocab/{model}.parquet", contracts.CANDIDATES)
        full = pd.concat(read(demo, f"probe/{model}/{name}/trex/test.parquet").assign(prompt_set=name) for name in sets)
        assert len(full) > 10_000
        changed = {}
        for dtype in ["float16", "bfloat16"]:
            settings = scoring.ScoringSettings(device="cpu", dtype=dtype)
            scorer = scoring.load(demo / "results/models" / model, "masked", settings)
            assert str(next(scorer.model.parameters()).dtype) == f"torch.{dtype}"
            assert next(scorer.head.parameters()).dtype == torch.float32
            low = pd.concat(
                table.to_pandas()[["fact_id", "prompt_id", "gold_rank"]].assign(prompt_set=name)
                for name, table, _ in probe.probe_parts(parts, scorer, candidates, top_k=1)
            )
            both = full.merge(low, on=["prompt_set", "fact_id", "prompt_id"], suffixes=("", "_low"))
            assert len(both) == len(full)
            right, right_low = both["gold_rank"] == 0, both["gold_rank_low"] == 0
            changed[dtype] = int((right != right_low).sum())
            assert changed[dtype] / len(both) < 0.002, (model, dtype)
            assert abs(right_low.mean() - right.mean()) <= 0.001, (model, dtype)
        assert changed["float16"] < changed["bfloat16"], changed  # bfloat16 is not float32: answers move


def test_fairseq_backend_needs_no_translator_download(tmp_path):
    project = copy_project(tmp_path)
    config = yaml.safe_load((project / "config.yaml").read_text())
    config["lpaqa"]["paraphrase"]["backend"] = "fairseq"
    (project / "fairseq.yaml").write_text(yaml.safe_dump(config))
    result = snakemake(project, "-n", "--quiet", "rules", "--configfile", "fairseq.yaml")
    assert "lpaqa_paraphrase" in result.stdout and "lpaqa_download_translator" not in result.stdout


def test_bad_fact_line_is_a_one_line_error_naming_file_and_line(tmp_path):
    project = copy_project(tmp_path)
    path = project / "resources/demo/lama/TREx/P36.jsonl"
    lines = path.read_text().splitlines()
    lines[2] = lines[2][:40]
    path.write_text("\n".join(lines) + "\n")
    # targets before --configfile, which takes several values
    result = snakemake(project, f"{RESULTS}/facts/trex/test.parquet", *DEMO, check=False)
    assert result.returncode != 0
    assert "knowprobe error: resources/demo/lama/TREx/P36.jsonl:3: not valid JSON" in result.stderr
    assert "Traceback" not in (project / "logs/lpaqa/import_facts/trex.log").read_text()
    assert not (project / RESULTS / "facts/trex/test.parquet").exists()


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
        "models": {"tiny-random-bert": {"kind": "masked", "path": str(model_dir)}},
        "scoring": {"device": "cpu", "threads": 2},
        "lpaqa": {
            "lama": {"data": str(data), "common_vocab": str(data / "common_vocab_cased.txt")},
            "probe": {"top_k": 5},
            "trex_train": {"source": "lpaqa", "lpaqa": str(require_shared("lpaqa", "TREx_train"))},
            "prompt_sets": ["manual"],
        },
    }
    (project / "real.yaml").write_text(yaml.safe_dump(config))
    snakemake(project, "--configfile", "real.yaml")

    summary = pd.read_csv(project / RESULTS / "tables/baseline.csv").set_index("method")
    trex_files = sorted((data / "TREx").glob("P*.jsonl"))
    assert summary.loc["Man", "T-REx relations"] == len(trex_files)  # relations without a file are skipped
    assert summary.loc["Man", "Google-RE relations"] == 3
    imported = sum(1 for path in trex_files for line in path.open() if line.strip())
    dropped = pd.read_csv(project / RESULTS / "tables/dropped_facts.csv")
    kept = summary.loc["Man", "T-REx facts"]
    assert kept + dropped.loc[dropped["dataset"] == "trex", "n"].sum() == imported
    google_kept = summary.loc["Man", "Google-RE facts"]
    assert google_kept + dropped.loc[dropped["dataset"] == "google_re", "n"].sum() == 2937 + 1825 + 766
    assert kept > 0.9 * imported  # LAMA's objects are all in its common vocabulary
    log = (project / "logs/lpaqa/import_facts/trex.log").read_text()
    assert f"{46 - len(trex_files)} relations of relations.jsonl have no T-REx file" in log
    # LPAQA's released T-REx-train, for the relations of the test set
    train = pd.read_parquet(project / RESULTS / "facts/trex/train_dev.parquet")
    # and of the relations Google-RE's map to: P19, P20 (P569, birth dates, is not in LPAQA's release)
    assert set(train["relation"]) == {p.stem for p in trex_files} | {"P19", "P20"}
    assert "P569: not in LPAQA's T-REx-train" in (project / "logs/lpaqa/trex_train/build.log").read_text()
    test = pd.read_parquet(project / RESULTS / "facts/trex/test.parquet")
    assert not set(zip(train["relation"], train["sub_uri"], train["obj_uri"])) & set(
        zip(test["relation"], test["sub_uri"], test["obj_uri"])
    )


def test_wikipedia_download_rule_fetches_dump_and_index_and_verifies_both(tmp_path, mirror):
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
    config["lpaqa"]["wikipedia"].update(path=None, index=None, date="20261101", mirror=url, chunks=2)
    (project / "mirror.yaml").write_text(yaml.safe_dump(config))
    snakemake(project, f"{RESULTS}/wikipedia/streams.json", "--configfile", "mirror.yaml")
    log = (project / "logs/lpaqa/download/wikipedia-20261101.log").read_text()
    assert log.count("md5 checksum verified") == 2
    streams = json.loads((project / RESULTS / "wikipedia/streams.json").read_text())
    assert len(streams["ranges"]) == 2 and all(streams["ranges"])


def test_demo_writes_every_paper_table_and_figure(demo):
    tables = demo / RESULTS / "tables"
    for number in range(1, 16):
        for suffix in ["md", "csv", "tex"]:
            assert (tables / f"table{number}.{suffix}").stat().st_size > 0, f"table{number}.{suffix}"
        # the paper's caption, quoted as the paper's (issue 28)
        assert (tables / f"table{number}.md").read_text().startswith(f"Table {number}. The paper's caption: \"")
    figures = demo / RESULTS / "figures"
    for number in range(2, 6):
        png = (figures / f"figure{number}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000, number
        assert (figures / f"figure{number}.svg").read_text().lstrip().startswith("<?xml")
        assert len(pd.read_csv(figures / f"figure{number}.csv")) > 0
    # Figure 2: Top-K for K = 1..10 per model and generated set; Figure 5 linear beside log-linear
    curve = pd.read_csv(figures / "figure2.csv")
    assert sorted(set(curve["K"])) == list(range(1, 11)) and set(curve["model"]) == {
        "tiny-demo-bert",
        "tiny-demo-bert-small",
    }
    assert {"Top1", "Top1-linear"} <= set(pd.read_csv(figures / "figure5.csv")["method"])
