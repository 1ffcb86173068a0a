"""ParaRel's patterns as the prompt set pararel: the importer on a small folder in ParaRel's
layout, the checksum listing, a dry run with the set switched on, and an offline run that
downloads the patterns from a loopback server and measures their consistency."""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import math
import tarfile
import threading

import pandas as pd
import pytest
import yaml

from knowprobe.download import read_manifest
from knowprobe.io import KnowprobeError
from knowprobe.lpaqa import pararel

from conftest import DEMO, copy_project, snakemake

COMMIT = "0" * 40


def record(pattern):
    return json.dumps({"pattern": pattern, "lemma": "x", "extended_lemma": "x", "tense": "present"})


# ParaRel's layout (data/pattern_data/graphs_json/P*.jsonl), relations of the demo's LAMA and one it lacks
FILES = {
    "P36.jsonl": [
        record("The capital of [X] is [Y]."),
        record("[Y] is the capital of [X]."),
        record("[X]'s capital is [Y] "),  # spaces around a pattern are dropped
        record("[Y] is the capital of [X]."),  # a repeat: duplicate
    ],
    "P37.jsonl": [
        record("The official language of [X] is [Y]."),
        "{not json",  # invalid_json
        record("[X] speaks an [Y] tongue."),  # an "an [Y]" pattern, which the article rule may skip
        record("[Y] and [Y] are spoken in [X]."),  # bad_template
        json.dumps({"lemma": "no pattern"}),  # not_a_pattern
        "",  # an empty line is nothing
        record("In [X], [Y] is the official language."),
    ],
    "P19.jsonl": [record("[X] was born in [Y]."), record("[X] is a native of [Y].")],
    "P1001.jsonl": [record("[X] is a legal term in [Y] .")],  # one pattern: no pair, no consistency
    "P9999.jsonl": [record("[X] is unknown to [Y]."), record("[Y] does not know [X].")],  # unknown_relation
}
BAD_UTF8 = b"\xff\xfe not UTF-8\n"  # appended to P19.jsonl: invalid_utf8
LAMA = {"P36", "P37", "P19", "P17", "P1001"}


def write_patterns(root):
    folder = root / "graphs_json"
    folder.mkdir(parents=True)
    for name, lines in FILES.items():
        (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    with open(folder / "P19.jsonl", "ab") as handle:
        handle.write(BAD_UTF8)
    return root


def listing(root):
    return "".join(
        f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.relative_to(root)}\n"
        for path in sorted((root / "graphs_json").glob("P*.jsonl"))
    )


def test_importer_reads_patterns_and_counts_every_line_left_out(tmp_path):
    table, dropped = pararel.read_patterns(write_patterns(tmp_path / "pattern_data"), LAMA)
    assert table.groupby("relation").size().to_dict() == {"P1001": 1, "P19": 2, "P36": 3, "P37": 3}
    assert list(table.loc[table["relation"] == "P36", "template"]) == [
        "The capital of [X] is [Y].",
        "[Y] is the capital of [X].",
        "[X]'s capital is [Y]",
    ]
    assert list(table.loc[table["relation"] == "P37", "rank"]) == [0, 1, 2]
    assert "[X] speaks an [Y] tongue." in set(table["template"])
    assert set(table["source"]) == {"pararel"} and table["score"].map(math.isnan).all()
    assert dropped["reason"].value_counts().to_dict() == {
        "unknown_relation": 2,
        "duplicate": 1,
        "invalid_json": 1,
        "bad_template": 1,
        "not_a_pattern": 1,
        "invalid_utf8": 1,
    }
    lines = {(r.relation, r.line): r.reason for r in dropped.itertuples()}
    assert lines[("P36", 4)] == "duplicate" and lines[("P37", 2)] == "invalid_json"
    assert lines[("P37", 4)] == "bad_template" and lines[("P37", 5)] == "not_a_pattern"
    assert lines[("P19", 3)] == "invalid_utf8" and lines[("P9999", 1)] == lines[("P9999", 2)] == "unknown_relation"
    # every non-empty line is either a prompt or a line left out
    written = sum(len([line for line in lines if line]) for lines in FILES.values()) + 1
    assert len(table) + len(dropped) == written


def test_importer_without_a_relation_list_keeps_every_relation(tmp_path):
    table, dropped = pararel.read_patterns(write_patterns(tmp_path / "pattern_data"))
    assert "P9999" in set(table["relation"]) and "unknown_relation" not in set(dropped["reason"])


def test_a_folder_without_patterns_is_one_error_naming_it(tmp_path):
    with pytest.raises(KnowprobeError, match="graphs_json: no P\\*.jsonl files"):
        pararel.read_patterns(tmp_path)


def test_checksum_listing_holds_the_folder_to_the_pinned_files(tmp_path):
    root = write_patterns(tmp_path / "pattern_data")
    sums = tmp_path / "pararel.sha256"
    sums.write_text(listing(root))
    assert pararel.verify_patterns(root, sums) == len(FILES)
    (root / "graphs_json/P36.jsonl").write_text(record("[X] is [Y].") + "\n")
    with pytest.raises(KnowprobeError, match="P36.jsonl: sha256 .* does not match"):
        pararel.verify_patterns(root, sums)
    sums.write_text(listing(root))
    (root / "graphs_json/P17.jsonl").write_text(record("[X] is in [Y].") + "\n")
    with pytest.raises(KnowprobeError, match="graphs_json/P17.jsonl not in the listing"):
        pararel.verify_patterns(root, sums)
    (root / "graphs_json/P17.jsonl").unlink()
    (root / "graphs_json/P19.jsonl").unlink()
    with pytest.raises(KnowprobeError, match="graphs_json/P19.jsonl missing"):
        pararel.verify_patterns(root, sums)
    sums.write_text(listing(root) + "not a line\n")
    with pytest.raises(KnowprobeError, match=f"{sums}:{len(FILES)}: not a '<sha256>  <file>' line"):
        pararel.verify_patterns(root, sums)


def test_pinned_listing_names_the_39_files_of_the_pinned_commit():
    from conftest import ROOT

    schema = yaml.safe_load((ROOT / "workflow/schemas/lpaqa.schema.yaml").read_text())["properties"]["pararel"]
    defaults = {key: value["default"] for key, value in schema["properties"].items()}
    assert defaults["release"].endswith("/cb5554678457beb5ac163d888f1ce8cf174b3f0b.tar.gz")
    listed = read_manifest(ROOT / defaults["checksums"])
    assert len(listed) == 39 and all(name.startswith("graphs_json/P") for name in listed)
    assert "graphs_json/P31.jsonl" not in listed and "graphs_json/P527.jsonl" not in listed


def switched_on(project, **pararel_config):
    config = yaml.safe_load((project / "resources/demo/config.yaml").read_text())
    config["lpaqa"]["prompt_sets"].append("pararel")
    if pararel_config:
        config["lpaqa"]["pararel"] = pararel_config
    (project / "pararel.yaml").write_text(yaml.safe_dump(config))
    return config


@pytest.mark.workflow
def test_dry_run_with_pararel_on_downloads_probes_and_measures_it(tmp_path):
    project = copy_project(tmp_path)
    off = snakemake(project, "-n", "--quiet", "rules", *DEMO)
    assert "lpaqa_download_pararel" not in off.stdout and "lpaqa_pararel_prompts" not in off.stdout
    switched_on(project)
    result = snakemake(project, "-n", "--configfile", "pararel.yaml")
    jobs = result.stdout
    for rule in ["lpaqa_download_pararel", "lpaqa_unpack_pararel", "lpaqa_pararel_prompts"]:
        assert jobs.count(f"rule {rule}:") == 1, rule
    # every run's probe writes the set (masked and causal, each score), and consistency reads it
    for run in ["tiny-demo-bert", "tiny-demo-bert-small", "tiny-demo-gpt@next_token", "tiny-demo-gpt@statement"]:
        assert f"results/lpaqa/probe/{run}/pararel/trex/test.parquet" in jobs, run
    consistency = jobs[jobs.index("rule lpaqa_consistency:") :].split("\n\n")[0]
    assert "results/lpaqa/probe/tiny-demo-gpt@statement/pararel/trex/test.parquet" in consistency


@pytest.fixture
def served(tmp_path):
    """ParaRel's repository archive (the fixture's patterns, in its layout) on a loopback server."""
    root = tmp_path / "served"
    source = write_patterns(tmp_path / "src" / f"pararel-{COMMIT}" / "data" / "pattern_data")
    (tmp_path / "src" / f"pararel-{COMMIT}" / "README.md").write_text("ParaRel\n")
    root.mkdir()
    with tarfile.open(root / f"{COMMIT}.tar.gz", "w:gz") as tar:
        tar.add(tmp_path / "src" / f"pararel-{COMMIT}", arcname=f"pararel-{COMMIT}")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/{COMMIT}.tar.gz", source, root / f"{COMMIT}.tar.gz"
    server.shutdown()


@pytest.mark.workflow
def test_offline_run_downloads_pararel_and_measures_its_consistency(tmp_path, served):
    url, source, archive = served
    project = copy_project(tmp_path / "project")
    (project / "pararel.sha256").write_text(listing(source))
    config = switched_on(project, release=url, checksums="pararel.sha256")
    # LPAQA alone, with models trained briefly: what is checked is the flow, not the numbers
    config["studies"] = ["lpaqa"]
    config["lpaqa"]["prompt_sets"] = ["manual", "pararel"]
    config["lpaqa"]["models"] = ["tiny-demo-bert", "tiny-demo-gpt"]
    for name in ("tiny-demo-bert", "tiny-demo-gpt"):
        config["models"][name]["train"]["steps"] = 30
    del config["models"]["tiny-demo-bert-small"]
    (project / "pararel.yaml").write_text(yaml.safe_dump(config))
    snakemake(project, "results/lpaqa/tables/consistency.csv", "--configfile", "pararel.yaml")

    lock = json.loads((project / "downloads.lock.json").read_text())["files"][url]
    assert lock["sha256"] == hashlib.sha256(archive.read_bytes()).hexdigest()
    unpacked = (project / "logs/lpaqa/download/unpack_pararel.log").read_text()
    assert f"{len(FILES)} files match pararel.sha256" in unpacked
    prompts = pd.read_parquet(project / "results/lpaqa/prompts/pararel.parquet")
    relations = {json.loads(line)["relation"] for line in (project / "resources/demo/lama/relations.jsonl").open()}
    # the demo's LAMA has P36, P37, P19 (and P20, P569 through Google-RE), not P1001 nor P9999
    assert {"P36", "P37", "P19"} <= relations and not {"P1001", "P9999"} & relations
    assert prompts.groupby("relation").size().to_dict() == {"P19": 2, "P36": 3, "P37": 3}
    dropped = pd.read_csv(project / "results/lpaqa/release/pararel.dropped.csv")
    assert dropped["reason"].value_counts().to_dict()["unknown_relation"] == 3  # P1001's line, P9999's two
    assert len(dropped) == 3 + 5
    assert "8 lines of ParaRel left out" in (project / "logs/lpaqa/prompts/pararel.log").read_text()

    table = pd.read_csv(project / "results/lpaqa/tables/consistency.csv")
    measured = table[table["prompt_set"] == "pararel"]
    runs = {"tiny-demo-bert", "tiny-demo-gpt@next_token", "tiny-demo-gpt@statement"}
    assert set(measured["model"]) == runs  # masked and causal, every score the probe writes
    trex = measured[measured["dataset"] == "trex"]
    facts = pd.read_parquet(project / "results/lpaqa/facts/trex/test.parquet")
    with_facts = {"P19", "P36", "P37"} & set(facts["relation"])
    assert (trex["relations"] == len(with_facts)).all() and len(with_facts) >= 2
    # "[X] speaks an [Y] tongue." is skipped for P37's objects that start with a consonant
    starts = facts.loc[facts["relation"] == "P37", "obj_label"].str[0]
    assert (~starts.str.upper().isin(list("AEIOU"))).any()  # French, German, ...
    assert (trex["skipped"] > 0).all() and (measured.loc[measured["dataset"] == "google_re", "skipped"] == 0).all()
    assert measured["consistency"].between(0, 100).all() and measured["all_agree"].between(0, 100).all()
    assert (measured["consistent_accuracy"] <= measured["all_agree"]).all()
    per = pd.read_csv(project / "results/lpaqa/tables/consistency_per_relation.csv")
    assert set(per.loc[per["prompt_set"] == "pararel", "relation"]) >= with_facts
