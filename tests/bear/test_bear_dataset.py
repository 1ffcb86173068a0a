"""BEAR's format: a BEAR-format directory imported and exported again gives the same files (key
order aside), lm-pub-quiz loads what we write, bad records are counted and left out, and the
download's files are held to the SHA-256 manifest."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from knowprobe import contracts
from knowprobe.bear import dataset
from knowprobe.download import read_manifest, verify_manifest
from knowprobe.io import KnowprobeError

from conftest import ROOT

DEMO = ROOT / "resources/demo/bear"


def parsed(directory: Path) -> dict:
    """Every file of a BEAR-format directory as JSON values (JSON lines as lists), so that files
    that differ in key order or spacing only compare equal."""
    out = {}
    for path in sorted(directory.iterdir()):
        text = path.read_text(encoding="utf-8")
        out[path.name] = (
            [json.loads(line) for line in text.splitlines()] if path.suffix == ".jsonl" else json.loads(text)
        )
    return out


def hand_made(directory: Path) -> Path:
    """A BEAR-format set with keys the importer does not interpret: a metadata key of its own, and
    aliases and a note on instance lines."""
    directory.mkdir(parents=True)
    metadata = {
        "P1": {
            "templates": ["[X] lives in [Y].", "[Y] is the home of [X]."],
            "answer_space_labels": ["New York City", "Paris", "Rome"],
            "answer_space_ids": ["Q60", "Q90", "Q220"],
            "description": "residence",
        },
        "P2": {
            "templates": ["[X] speaks [Y]."],
            "answer_space_labels": ["French", "Old English"],
            "answer_space_ids": ["Q150", "Q42365"],
        },
    }
    (directory / "metadata_relations.json").write_text(json.dumps(metadata, indent=4))
    lines = {
        "P1": [
            {
                "sub_id": "Q1",
                "sub_label": "Ada",
                "sub_aliases": ["A."],
                "obj_id": "Q90",
                "obj_label": "Paris",
                "answer_idx": 1,
            },
            {
                "sub_id": "Q2",
                "sub_label": "Bo",
                "sub_aliases": [],
                "obj_id": "Q60",
                "obj_label": "New York City",
                "answer_idx": 0,
                "note": 3,
            },
        ],
        "P2": [{"sub_id": "Q3", "sub_label": "Cy", "obj_id": "Q42365", "obj_label": "Old English", "answer_idx": 1}],
    }
    for code, records in lines.items():
        # keys in another order than the writer's, compact separators: only the values must come back
        (directory / f"{code}.jsonl").write_text(
            "".join(json.dumps(dict(reversed(r.items())), separators=(",", ":")) + "\n" for r in records)
        )
    return directory


@pytest.mark.parametrize("source", ["demo", "hand_made"])
def test_import_then_export_gives_the_same_files(tmp_path, source):
    directory = DEMO if source == "demo" else hand_made(tmp_path / "in")
    relations, instances, rejects = dataset.read_dataset(directory)
    assert rejects.empty
    # through the contracts, as the workflow passes them between rules
    contracts.write(relations, tmp_path / "r.parquet", contracts.BEAR_RELATIONS)
    contracts.write(instances, tmp_path / "i.parquet", contracts.BEAR_INSTANCES)
    relations = contracts.read(tmp_path / "r.parquet", contracts.BEAR_RELATIONS)
    instances = contracts.read(tmp_path / "i.parquet", contracts.BEAR_INSTANCES)
    dataset.write_dataset(relations, instances, tmp_path / "out")
    expected = parsed(directory)
    expected.pop("relation_info.json", None)  # the demo keeps the domains beside; they are not the format's
    assert parsed(tmp_path / "out") == expected
    if source == "hand_made":
        assert json.loads(relations.loc[0, "metadata"]) == {"description": "residence"}
        assert json.loads(instances.loc[1, "extra"]) == {"sub_aliases": [], "note": 3}


def test_lm_pub_quiz_loads_what_we_write(tmp_path):
    lm_pub_quiz = pytest.importorskip("lm_pub_quiz")
    relations, instances, _ = dataset.read_dataset(hand_made(tmp_path / "in"))
    dataset.write_dataset(relations, instances, tmp_path / "out")
    loaded = lm_pub_quiz.Dataset.from_path(tmp_path / "out")
    assert sorted(loaded.relation_codes) == ["P1", "P2"]
    p1 = loaded["P1"]
    assert p1.templates == ["[X] lives in [Y].", "[Y] is the home of [X]."]
    assert list(p1.answer_space) == ["New York City", "Paris", "Rome"]
    assert list(p1.instance_table["answer_idx"]) == [1, 0]
    assert list(p1.instance_table["sub_label"]) == ["Ada", "Bo"]


def test_domains_come_from_relation_info(tmp_path):
    domains = dataset.read_relation_info(DEMO / "relation_info.json")
    assert domains["P20"] == ["Biographical", "Historical"] and domains["P36"] == ["Geographic"]
    assert dataset.read_relation_info(None) == {}
    bad = tmp_path / "info.json"
    bad.write_text(json.dumps({"P20": {"domains": "Biographical"}}))
    with pytest.raises(KnowprobeError, match=r"info.json: P20: 'domains' is not a list"):
        dataset.read_relation_info(bad)


def test_bad_records_are_counted_and_left_out(tmp_path):
    directory = hand_made(tmp_path / "in")
    metadata = json.loads((directory / "metadata_relations.json").read_text())
    metadata["P1"]["templates"].append("[X] has no object slot.")
    metadata["P3"] = {"templates": ["[X] x [Y]."], "answer_space_labels": ["a"], "answer_space_ids": ["Qa"]}
    metadata["P4"] = {"templates": ["[X] y [Y]."]}
    (directory / "P4.jsonl").write_text("")
    (directory / "P9.jsonl").write_text("")
    (directory / "metadata_relations.json").write_text(json.dumps(metadata))
    with (directory / "P1.jsonl").open("a") as handle:
        handle.write("not json\n")
        handle.write(json.dumps({"sub_label": "", "obj_id": "Q90", "obj_label": "Paris"}) + "\n")
        handle.write(json.dumps({"sub_label": "Di", "obj_id": "Q1000", "obj_label": "Oslo"}) + "\n")
        handle.write(json.dumps({"sub_label": "Ed", "obj_id": "Q90", "obj_label": "Paris", "answer_idx": 2}) + "\n")
        handle.write(json.dumps({"sub_label": "Fa", "obj_id": "Q220", "obj_label": "Rome"}) + "\n")
    relations, instances, rejects = dataset.read_dataset(directory)
    assert list(relations["relation"]) == ["P1", "P2"]
    counts = {(r.file, r.reason): r.n for r in rejects.itertuples()}
    assert counts == {
        ("P9.jsonl", "no_metadata"): 1,
        ("metadata_relations.json", "bad_template"): 1,
        ("P1.jsonl", "invalid_json"): 1,
        ("P1.jsonl", "missing_label"): 1,
        ("P1.jsonl", "not_in_answer_space"): 1,
        ("P1.jsonl", "answer_idx_mismatch"): 1,
        ("metadata_relations.json", "no_file"): 1,
        ("metadata_relations.json", "no_answer_space"): 1,
    }
    p1 = instances[instances["relation"] == "P1"]
    # a line without answer_idx gets it from obj_id; the kept lines are numbered anew
    assert list(p1["sub_label"]) == ["Ada", "Bo", "Fa"] and list(p1["instance"]) == [0, 1, 2]
    assert list(p1["answer_idx"]) == [1, 0, 2]
    assert list(relations.loc[0, "templates"]) == ["[X] lives in [Y].", "[Y] is the home of [X]."]


def test_metadata_rejects_name_their_relation_and_template(tmp_path, caplog):
    """Issue 54: metadata rejects named only metadata_relations.json; a templates value that is a
    string counted as one bad template per character."""
    directory = hand_made(tmp_path / "in")
    metadata = json.loads((directory / "metadata_relations.json").read_text())
    metadata["P1"]["templates"].append("[X] has no object slot.")
    metadata["P2"]["templates"] = "[X] speaks [Y]. A string of 26 characters"
    metadata["P3"] = {"templates": ["[X] x [Y]."], "answer_space_labels": ["a"], "answer_space_ids": ["Qa"]}
    (directory / "metadata_relations.json").write_text(json.dumps(metadata))
    with caplog.at_level("WARNING"):
        _, _, rejects = dataset.read_dataset(directory)
    rows = {(r.relation, r.reason): (r.n, r.first) for r in rejects.itertuples()}
    assert rows == {
        ("P1", "bad_template"): (1, "template 3: template '[X] has no object slot.' has 0 [Y] (needs exactly one)"),
        ("P2", "bad_template"): (1, "templates is a str, not a list"),
        ("P2", "no_template"): (1, "no usable template"),
        ("P3", "no_file"): (1, f"no P3.jsonl in {directory}"),
    }
    assert "metadata_relations.json: P1: template 3: template '[X] has no object slot.'" in caplog.text
    assert "metadata_relations.json: P3: no P3.jsonl" in caplog.text


def test_answer_spaces_and_lines_repeated_null_or_far_too_long_are_counted(tmp_path):
    """Issue 54: a null label became the candidate "None"; a label given twice, a line given
    twice, a sub_id given twice passed without a word; a 5 MB answer or subject was imported."""
    directory = hand_made(tmp_path / "in")
    metadata = json.loads((directory / "metadata_relations.json").read_text())
    huge = "Paris " * 1_000_000
    metadata["P1"]["answer_space_labels"] += [None, "Paris", huge, "Oslo"]
    metadata["P1"]["answer_space_ids"] += ["Q0", "Q91", "Q5", "Q585"]
    (directory / "metadata_relations.json").write_text(json.dumps(metadata))
    lines = (directory / "P1.jsonl").read_text().splitlines(keepends=True)
    extra = [
        lines[0],  # the same line again
        json.dumps({"sub_id": "Q1", "sub_label": "Ada", "obj_id": "Q585", "obj_label": "Oslo"}) + "\n",
        json.dumps({"sub_id": "Q7", "sub_label": "Gus", "obj_id": "Q91", "obj_label": "Paris"}) + "\n",
        json.dumps({"sub_id": "Q8", "sub_label": "Hal", "obj_id": "Q0", "obj_label": "None"}) + "\n",
        json.dumps({"sub_id": "Q9", "sub_label": "x" * 200_000, "obj_id": "Q90", "obj_label": "Paris"}) + "\n",
        json.dumps({"sub_id": "Q10", "sub_label": "Ivo", "obj_id": "Q5", "obj_label": huge}) + "\n",
    ]
    (directory / "P1.jsonl").write_text("".join(lines + extra))
    relations, instances, rejects = dataset.read_dataset(directory)
    p1 = relations.set_index("relation").loc["P1"]
    assert list(p1["answer_space_labels"]) == ["New York City", "Paris", "Rome", "Oslo"]
    assert list(p1["answer_space_ids"]) == ["Q60", "Q90", "Q220", "Q585"]
    counts = {(r.relation, r.reason): (r.n, bool(r.left_out)) for r in rejects.itertuples()}
    assert counts == {
        ("P1", "null_answer"): (1, True),
        ("P1", "duplicate_answer"): (1, True),
        ("P1", "too_long_answer"): (1, True),
        ("P1", "duplicate_line"): (1, True),
        ("P1", "duplicate_sub_id"): (1, False),
        ("P1", "answer_left_out"): (1, True),
        ("P1", "too_long"): (2, True),
    }
    first = dict(zip(rejects["reason"], rejects["first"]))
    assert first["null_answer"] == "answer 4 ('Q0') is None"
    assert first["duplicate_line"] == "line 3" and first["duplicate_sub_id"] == "line 4: sub_id 'Q1'"
    assert first["too_long_answer"].startswith("answer 6 ('Q5') is 6,000,000 characters long: 'Paris Paris")
    assert len(first["too_long_answer"]) < 200
    p1_instances = instances[instances["relation"] == "P1"]
    # Ada's second object (Oslo, now position 3) kept; Gus's Q91 "Paris" read as the first Paris
    assert list(p1_instances["sub_label"]) == ["Ada", "Bo", "Ada", "Gus"]
    assert list(p1_instances["answer_idx"]) == [1, 0, 3, 1]


def test_a_folder_whose_instance_files_are_all_empty_stops_at_import(tmp_path):
    """Issue 54: it imported as 0 instances and crashed in random_baseline."""
    directory = hand_made(tmp_path / "in")
    for path in directory.glob("*.jsonl"):
        path.write_text("")
    with pytest.raises(KnowprobeError, match=rf"^{directory}: no instance in any of its 2 relation files") as error:
        dataset.read_dataset(directory)
    assert "\n" not in str(error.value)


def test_not_a_bear_directory_is_one_line(tmp_path):
    with pytest.raises(KnowprobeError, match=r"metadata_relations.json: file not found"):
        dataset.read_dataset(tmp_path)
    (tmp_path / "metadata_relations.json").write_text("[1, 2]")
    with pytest.raises(KnowprobeError, match="expected an object mapping each relation code"):
        dataset.read_dataset(tmp_path)


def test_the_manifest_holds_every_file(tmp_path):
    root = tmp_path / "repository"
    shutil.copytree(DEMO, root / "BEAR")
    manifest = tmp_path / "manifest.sha256"
    from knowprobe.download import file_digest

    manifest.write_text(
        "".join(f"{file_digest(p, 'sha256')}  BEAR/{p.name}\n" for p in sorted((root / "BEAR").iterdir()))
    )
    assert verify_manifest(root, manifest) == len(list((root / "BEAR").iterdir()))
    with (root / "BEAR/P36.jsonl").open("a") as handle:
        handle.write("\n")
    with pytest.raises(KnowprobeError, match=r"P36.jsonl: sha256 \w+ does not match"):
        verify_manifest(root, manifest)
    (root / "BEAR/P36.jsonl").unlink()
    with pytest.raises(KnowprobeError, match="BEAR/P36.jsonl missing"):
        verify_manifest(root, manifest)


def test_the_shipped_manifest_lists_the_pinned_commit():
    """resources/checksums/bear-725b4e3.sha256 covers both dataset folders of commit 725b4e3 (61 files
    of BEAR: 60 relations and the metadata; 79 of BEAR-big)."""
    names = list(read_manifest(ROOT / "resources/checksums/bear-725b4e3.sha256"))
    assert sum(n.startswith("BEAR/") for n in names) == 61 and "BEAR/metadata_relations.json" in names
    assert sum(n.startswith("BEAR-big/") for n in names) == 79


def test_download_unpack_and_check(tmp_path, monkeypatch):
    """The archive as GitHub serves it (a zip whose top folder is REPO-COMMIT/), downloaded from a
    loopback server, unpacked to the folder holding BEAR/ and checked against a manifest."""
    import functools
    import http.server
    import threading
    import zipfile

    from knowprobe.download import download, file_digest, unpack

    served = tmp_path / "served"
    served.mkdir()
    with zipfile.ZipFile(served / "archive.zip", "w") as archive:
        for path in sorted(DEMO.iterdir()):
            archive.write(path, f"BEAR-0123/BEAR/{path.name}")
        archive.writestr("BEAR-0123/README.md", "BEAR")
    manifest = tmp_path / "manifest.sha256"
    manifest.write_text("".join(f"{file_digest(p, 'sha256')}  BEAR/{p.name}\n" for p in sorted(DEMO.iterdir())))
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        archive = download(f"http://127.0.0.1:{server.server_address[1]}/archive.zip", tmp_path / "repository.zip")
    finally:
        server.shutdown()
    root = unpack(archive, tmp_path / "repository", "BEAR/metadata_relations.json", "an archive of BEAR")
    assert (root / "README.md").is_file() and verify_manifest(root, manifest) == len(list(DEMO.iterdir()))
    relations, instances, _ = dataset.read_dataset(root / "BEAR")
    assert len(relations) == 4 and isinstance(instances, pd.DataFrame) and len(instances) > 100


def test_a_downloaded_relation_info_is_held_to_its_sha256(tmp_path):
    from knowprobe.download import file_digest

    path = tmp_path / "relation_info.json"
    shutil.copyfile(DEMO / "relation_info.json", path)
    dataset.verify_digest(path, file_digest(path, "sha256"), "bear.relation_info.sha256")
    with pytest.raises(KnowprobeError, match=r"relation_info.json: sha256 \w+ does not match 0+ \(bear.relation_info"):
        dataset.verify_digest(path, "0" * 64, "bear.relation_info.sha256")


def test_a_seeded_sample_keeps_at_most_n_instances_of_each_relation_in_file_order():
    """bear.per_relation: each relation's draw depends on the seed and its code only, so adding a
    relation changes no other's sample; the kept instances keep their numbers and file order."""
    from knowprobe.bear.dataset import sample_instances, sample_note

    instances = pd.DataFrame({"relation": ["P1"] * 10 + ["P2"] * 3, "instance": list(range(10)) + list(range(3))})
    sample = sample_instances(instances, 4, seed=0)
    assert sample.groupby("relation").size().to_dict() == {"P1": 4, "P2": 3}
    kept = sample.loc[sample["relation"] == "P1", "instance"].tolist()
    assert kept == sorted(kept) and set(kept) <= set(range(10))
    alone = sample_instances(instances[instances["relation"] == "P1"], 4, seed=0)
    assert alone["instance"].tolist() == kept
    assert sample_instances(instances, 4, seed=1)["instance"].tolist() != sample["instance"].tolist()
    assert sample_instances(instances, None, seed=0) is instances
    assert sample_note(None, 0, 13) == ""
    assert sample_note(4, 0, 7).startswith("; a seeded sample of BEAR: at most 4 instances of each relation")
