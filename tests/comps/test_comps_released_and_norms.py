"""The authors' released stimuli and the XCSLB norms: every bad line or row counted by reason,
the good ones kept."""

import json
import math

import pandas as pd
import pytest

from knowprobe.comps import norms, released
from knowprobe.io import KnowprobeError

GOOD = {
    "id": 0,
    "property": "can fly",
    "acceptable_concept": "robin",
    "unacceptable_concept": "penguin",
    "prefix_acceptable": "a robin",
    "prefix_unacceptable": "a penguin",
    "property_phrase": "can fly.",
    "negative_sample_type": "taxonomic",
    "similarity": 0.88,
}


def write_release(directory, base_lines):
    directory.mkdir(exist_ok=True)
    (directory / "comps_base.jsonl").write_text("\n".join(base_lines) + "\n")
    wug = dict(
        GOOD, prefix_acceptable="A wug is a robin. Therefore, a wug", nonsense_words=["wug"], distraction_type="base"
    )
    for name in ("comps_wugs.jsonl", "comps_wugs_dist-before.jsonl", "comps_wugs_dist-in-between.jsonl"):
        (directory / name).write_text(json.dumps(wug) + "\n")


def test_bad_released_lines_are_counted_by_reason_and_the_rest_kept(tmp_path):
    lines = [
        json.dumps(GOOD),
        json.dumps(dict(GOOD, id=1, similarity=None, extra_field="kept out", property_phrase="can swim.")),
        "{not json",
        "[1, 2]",
        json.dumps({k: v for k, v in GOOD.items() if k != "property_phrase"}),
        json.dumps(dict(GOOD, id="2")),
        json.dumps(dict(GOOD, id=3, prefix_unacceptable=" ")),
        json.dumps(dict(GOOD, id=4, similarity="high")),
        json.dumps(dict(GOOD, id=5, similarity=True)),
        json.dumps(dict(GOOD, id=0, property="can swim")),
        "",
    ]
    write_release(tmp_path / "comps", lines)
    stimuli, rejects = released.read_release(tmp_path / "comps")
    base = stimuli[stimuli["subset"] == "base"]
    assert list(base["id"]) == [0, 1] and math.isnan(base["similarity"].iloc[1])
    counted = {(r.file, r.reason): r.n for r in rejects.itertuples()}
    assert counted == {
        ("comps_base.jsonl", "invalid_json"): 2,
        ("comps_base.jsonl", "missing_field"): 1,
        ("comps_base.jsonl", "bad_type"): 4,
        ("comps_base.jsonl", "duplicate_id"): 1,
    }
    wugs = stimuli[stimuli["subset"] == "wugs"]
    assert list(wugs["nonce_words"]) == ["wug"] and set(stimuli["origin"]) == {"released"}
    assert set(stimuli["subset"]) == {"base", "wugs", "wugs_dist_before", "wugs_dist_in_between"}


def test_a_missing_released_file_is_one_error_naming_it(tmp_path):
    write_release(tmp_path / "comps", [json.dumps(GOOD)])
    (tmp_path / "comps" / "comps_wugs.jsonl").unlink()
    with pytest.raises(KnowprobeError, match="no comps_wugs.jsonl"):
        released.read_release(tmp_path / "comps")


def test_norms_rows_that_cannot_be_used_are_counted(tmp_path):
    (tmp_path / "concept_senses.csv").write_text(
        "category,concept,sensekey,article\n"
        "bird,robin,robin%1:05:00::,a robin\n"
        "bird,robin,robin%1:05:01::,a robin\n"
        "bird,emu,,an emu\n"
        "land animal,guinea_pig,guinea_pig%1:05:00::,a guinea_pig\n"
    )
    (tmp_path / "xcslb_compressed.csv").write_text(
        "concept,feature,label,category\n"
        "robin,can fly,1,bird\n"
        "robin,can fly,1,bird\n"
        "robin,can swim,0,bird\n"
        ",has fur,1,bird\n"
        "guinea_pig,has fur,1,land animal\n"
        "unicorn,has a horn,1,myth\n"
    )
    world = norms.read_norms(tmp_path)
    assert list(world.concepts["concept"]) == ["robin", "guinea_pig"]
    assert sorted(map(tuple, world.features.to_numpy())) == [("guinea_pig", "has fur"), ("robin", "can fly")]
    counted = {(r.file, r.reason): r.n for r in world.rejects.itertuples()}
    assert counted == {
        ("concept_senses.csv", "duplicate"): 1,
        ("concept_senses.csv", "missing_field"): 1,
        ("xcslb_compressed.csv", "duplicate"): 1,
        ("xcslb_compressed.csv", "label_not_1"): 1,
        ("xcslb_compressed.csv", "missing_field"): 1,
        ("xcslb_compressed.csv", "no_sense"): 1,
    }
    assert norms.noun_phrase("a guinea_pig") == "a guinea pig"


def test_the_readmes_layout_one_wugs_dist_file_and_condition_is_read(tmp_path):
    """comps_wugs_dist.jsonl with distraction_type (before/close, in-between/far) and the
    negative's kind as `condition`, as the authors' README shows them."""
    directory = tmp_path / "comps"
    directory.mkdir()
    readme_record = {k: v for k, v in GOOD.items() if k != "negative_sample_type"} | {"condition": "taxonomic"}
    (directory / "comps_base.jsonl").write_text(json.dumps(readme_record) + "\n")
    wug = dict(readme_record, prefix_acceptable="A wug is a robin. Therefore, a wug", nonsense_words=["wug"])
    (directory / "comps_wugs.jsonl").write_text(json.dumps(dict(wug, distraction_type="base")) + "\n")
    dist = [
        dict(wug, id=0, distraction_type="before"),
        dict(wug, id=1, distraction_type="close", property_phrase="can sing."),
        dict(wug, id=0, distraction_type="in-between"),
        dict(wug, id=1, distraction_type="far", property_phrase="can sing."),
        dict(wug, id=2, distraction_type="sideways"),
        dict(wug, id=3),
        dict(wug, id=0, distraction_type="before", property_phrase="can swim."),
    ]
    (directory / "comps_wugs_dist.jsonl").write_text("".join(json.dumps(d) + "\n" for d in dist))
    stimuli, rejects = released.read_release(directory)
    counts = stimuli.groupby("subset")["id"].apply(list).to_dict()
    assert counts == {"base": [0], "wugs": [0], "wugs_dist_before": [0, 1], "wugs_dist_in_between": [0, 1]}
    assert set(stimuli["negative_sample_type"]) == {"taxonomic"}
    counted = {(r.file, r.reason): r.n for r in rejects.itertuples()}
    assert counted == {
        ("comps_wugs_dist.jsonl", "unknown_distraction_type"): 2,
        ("comps_wugs_dist.jsonl", "duplicate_id"): 1,
    }


def test_the_four_file_layout_takes_the_subset_from_the_file(tmp_path):
    write_release(tmp_path / "comps", [json.dumps(GOOD)])  # every WUGS line says distraction_type base
    stimuli, rejects = released.read_release(tmp_path / "comps")
    assert sorted(stimuli["subset"]) == ["base", "wugs", "wugs_dist_before", "wugs_dist_in_between"]
    assert rejects.empty


def test_a_release_with_both_or_neither_wugs_dist_layout_is_one_error(tmp_path):
    write_release(tmp_path / "comps", [json.dumps(GOOD)])
    (tmp_path / "comps" / "comps_wugs_dist.jsonl").write_text(json.dumps(GOOD) + "\n")
    with pytest.raises(KnowprobeError, match="give one layout of WUGS-DIST"):
        released.read_release(tmp_path / "comps")
    for name in ("comps_wugs_dist.jsonl", "comps_wugs_dist-before.jsonl"):
        (tmp_path / "comps" / name).unlink()
    with pytest.raises(KnowprobeError, match="no comps_wugs_dist.jsonl and no comps_wugs_dist-before.jsonl"):
        released.read_release(tmp_path / "comps")


def test_a_concept_without_properties_is_counted_and_never_a_negative(tmp_path):
    """As the authors' builder: the concepts are the long-form norms' (the release's nine
    "reading" concepts, book, menu, ..., have no property)."""
    from knowprobe.comps import builder

    (tmp_path / "concept_senses.csv").write_text(
        "category,concept,sensekey,article\n"
        "bird,robin,robin%1:05:00::,a robin\n"
        "reading,book,book%1:06:00::,a book\n"
        "bird,penguin,penguin%1:05:00::,a penguin\n"
        "reading,menu,menu%1:10:00::,a menu\n"
    )
    (tmp_path / "xcslb_compressed.csv").write_text(
        "concept,feature,label,category\nrobin,can fly,1,bird\nrobin,has feathers,1,bird\npenguin,has feathers,1,bird\n"
    )
    world = norms.read_norms(tmp_path)
    assert list(world.concepts["concept"]) == ["robin", "penguin"]
    assert {(r.file, r.reason): r.n for r in world.rejects.itertuples()} == {("concept_senses.csv", "no_property"): 2}
    concepts = world.concepts.assign(synset=-1, is_animal=True, has_vector=True)
    similarity = builder.similarity_table(world, concepts, None, {})
    pairs, _ = builder.draw_pairs(world.features, similarity, positives=10, seed=0)
    assert set(pairs["unacceptable_concept"]) == {"penguin"}


def test_norms_with_a_missing_column_or_file_are_one_error(tmp_path):
    with pytest.raises(KnowprobeError, match="concept_senses.csv: not found"):
        norms.read_norms(tmp_path)
    (tmp_path / "concept_senses.csv").write_text("category,concept,article\nbird,robin,a robin\n")
    with pytest.raises(KnowprobeError, match="no column 'sensekey'"):
        norms.read_norms(tmp_path)


def test_byte_order_marks_crlf_invalid_utf8_repeated_pairs_and_extra_columns(tmp_path):
    """A BOM and CRLF line ends are read as nothing; a line that is not UTF-8, a pair repeated
    under a new id, a norms row with a column too many: each a counted reject naming file and
    line, every good record kept."""
    directory = tmp_path / "comps"
    write_release(directory, [json.dumps(GOOD)])
    lines = [GOOD, dict(GOOD, id=1, property="can sing", property_phrase="can sing."), dict(GOOD, id=2)]
    base = "\ufeff" + "\r\n".join(json.dumps(line) for line in lines)
    (directory / "comps_base.jsonl").write_bytes(
        base.encode("utf-8") + b"\r\n" + b'{"id": 3, "property": "is cr\xe9nchy"}\r\n'
    )
    stimuli, rejects = released.read_release(directory)
    assert list(stimuli.loc[stimuli["subset"] == "base", "id"]) == [0, 1]  # the first line kept despite the BOM
    counted = {(r.file, r.reason): r.n for r in rejects.itertuples()}
    assert counted == {("comps_base.jsonl", "duplicate_record"): 1, ("comps_base.jsonl", "invalid_utf8"): 1}

    (tmp_path / "concept_senses.csv").write_bytes(
        "\ufeffcategory,concept,sensekey,article\r\nbird,robin,robin%1:05:00::,a robin\r\n".encode()
        + b"bird,caf\xe9,cafe%1:06:00::,a cafe\r\n"
    )
    (tmp_path / "xcslb_compressed.csv").write_bytes(
        b"concept,feature,label,category\r\nrobin,can fly,1,bird\r\nrobin,is red, and round,1,bird\r\n"
    )
    world = norms.read_norms(tmp_path)
    assert list(world.concepts["concept"]) == ["robin"] and list(world.features["feature"]) == ["can fly"]
    counted = {(r.file, r.reason): r.n for r in world.rejects.itertuples()}
    assert counted == {("concept_senses.csv", "invalid_utf8"): 1, ("xcslb_compressed.csv", "extra_field"): 1}


def demo_stimuli():
    """The builder's output on the demo's norms, WordNet and vectors (resources/demo/comps)."""
    from pathlib import Path

    from knowprobe.comps import builder, vectors, wordnet

    demo = Path(__file__).resolve().parents[2] / "resources/demo/comps"
    world = norms.read_norms(demo)
    taxonomy = wordnet.read_taxonomy(demo / "wordnet")
    found = vectors.concept_vectors(demo / "glove.demo.6d.txt", None, world.concepts["concept"])
    concepts = builder.concept_table(world, taxonomy, found, "animal%1:03:00::")
    similarity = builder.similarity_table(world, concepts, taxonomy, found)
    pairs, _ = builder.draw_pairs(world.features, similarity, positives=10, seed=0)
    return builder.stimuli(pairs, concepts, ["wug", "dax", "blicket", "fep"], seed=0)


def released_record(row) -> dict:
    """A stimulus as the authors' files write it."""
    record = {key: getattr(row, key) for key in ("id", *released.TEXT_FIELDS, "negative_sample_type")}
    record["similarity"] = None if math.isnan(row.similarity) else row.similarity
    if row.subset != "base":
        record["nonsense_words"] = row.nonce_words.split()
        record["distraction_type"] = {"wugs": "base", "wugs_dist_before": "before"}.get(row.subset, "in-between")
    return record


def write_as_released(stimuli, directory, readme_layout: bool = False) -> None:
    directory.mkdir()
    files = {"base": "comps_base.jsonl", "wugs": "comps_wugs.jsonl"}
    if readme_layout:
        files |= {"wugs_dist_before": "comps_wugs_dist.jsonl", "wugs_dist_in_between": "comps_wugs_dist.jsonl"}
    else:
        files |= released.SPLIT_DIST_FILES
    for row in stimuli.itertuples(index=False):
        with open(directory / files[row.subset], "a", encoding="utf-8") as handle:
            handle.write(json.dumps(released_record(row)) + "\n")


@pytest.mark.parametrize("readme_layout", [False, True])
def test_the_builders_pairs_written_as_released_read_back_count_for_count(tmp_path, readme_layout):
    """Two negative kinds that choose the same concept give two pairs of the same texts (COMPS's
    four pairs per positive): only a repeat of a whole record, kind included, is a duplicate
    (before: the demo's 1,320 pairs read back as 1,216, 104 counted duplicate_pair)."""
    built = demo_stimuli()
    kinds = built.groupby(["subset", "prefix_acceptable", "prefix_unacceptable", "property_phrase"]).size()
    assert (kinds > 1).sum() > 0  # the case: pairs whose texts repeat under another kind
    write_as_released(built, tmp_path / "comps", readme_layout)
    stimuli, rejects = released.read_release(tmp_path / "comps")
    assert rejects.empty, rejects
    columns = [c for c in released.STIMULUS_COLUMNS if c != "origin"]
    key = ["subset", "id"]
    pd.testing.assert_frame_equal(
        stimuli[columns].sort_values(key).reset_index(drop=True),
        built[columns].sort_values(key).reset_index(drop=True),
        check_dtype=False,
    )
    for by in ("subset", "negative_sample_type"):
        assert stimuli.groupby(by).size().to_dict() == built.groupby(by).size().to_dict()


def test_a_whole_record_repeated_is_the_one_duplicate(tmp_path):
    lines = [
        GOOD,
        dict(GOOD, id=1, negative_sample_type="overlap", similarity=0.5),  # same texts, another kind: kept
        dict(GOOD, id=2),  # the first record again under another id
    ]
    write_release(tmp_path / "comps", [json.dumps(line) for line in lines])
    stimuli, rejects = released.read_release(tmp_path / "comps")
    assert list(stimuli.loc[stimuli["subset"] == "base", "negative_sample_type"]) == ["taxonomic", "overlap"]
    assert {(r.file, r.reason): r.n for r in rejects.itertuples()} == {("comps_base.jsonl", "duplicate_record"): 1}


def test_empty_unreadable_or_compressed_release_files_are_one_error_naming_the_file(tmp_path):
    """Before: four empty files gave four tracebacks from the tokenizer (IndexError) in the
    probes, one empty subset file vanished from every table, and a gzip file under a .jsonl name
    was 28 invalid_utf8 lines."""
    import gzip

    directory = tmp_path / "comps"
    write_release(directory, [json.dumps(GOOD)])
    for name in released.release_files(directory):
        (directory / name).write_text("")
    with pytest.raises(KnowprobeError, match=r"comps_base.jsonl: no pairs \(an empty file\)"):
        released.read_release(directory)
    write_release(directory, [json.dumps(GOOD)])
    (directory / "comps_wugs_dist-in-between.jsonl").write_text("\n\n")
    with pytest.raises(KnowprobeError, match=r"comps_wugs_dist-in-between.jsonl: no pairs \(an empty file\)"):
        released.read_release(directory)
    (directory / "comps_wugs_dist-in-between.jsonl").write_bytes(b"{not json\n\xff\xfe\n")
    with pytest.raises(
        KnowprobeError,
        match=r"comps_wugs_dist-in-between.jsonl: no pairs \(2 lines left out: invalid_json 1, invalid_utf8 1\)",
    ):
        released.read_release(directory)
    (directory / "comps_wugs.jsonl").write_bytes(gzip.compress((json.dumps(GOOD) + "\n").encode() * 50))
    with pytest.raises(KnowprobeError, match=r"comps_wugs.jsonl: gzip-compressed data under a text file's name"):
        released.read_release(directory)
    (tmp_path / "unreadable.jsonl").mkdir()  # what open() refuses, whoever runs the tests
    with pytest.raises(KnowprobeError, match=r"unreadable.jsonl: cannot be read \(Is a directory\)"):
        released.read_file(tmp_path / "unreadable.jsonl", "base")


def test_a_readme_layout_subset_without_pairs_is_one_error(tmp_path):
    directory = tmp_path / "comps"
    write_release(directory, [json.dumps(GOOD)])
    for name in released.SPLIT_DIST_FILES.values():
        (directory / name).unlink()
    wug = dict(GOOD, prefix_acceptable="A wug is a robin. Therefore, a wug", nonsense_words=["wug"])
    (directory / "comps_wugs_dist.jsonl").write_text(json.dumps(dict(wug, distraction_type="before")) + "\n")
    with pytest.raises(KnowprobeError, match=r"comps_wugs_dist.jsonl: no pairs of wugs_dist_in_between"):
        released.read_release(directory)


def test_an_id_of_one_subset_in_two_files_is_one_error_naming_both(tmp_path):
    """Lines of comps_wugs.jsonl that name a distractor's place join that WUGS-DIST subset: an id
    given there and to another pair in comps_wugs_dist.jsonl is one error naming both files
    (before: both kept, and comps_tables stopped on pandas.errors.MergeError); the same record
    in both is a counted duplicate_record."""
    directory = tmp_path / "comps"
    write_release(directory, [json.dumps(GOOD)])
    for name in released.SPLIT_DIST_FILES.values():
        (directory / name).unlink()
    wug = dict(GOOD, prefix_acceptable="A wug is a robin. Therefore, a wug", nonsense_words=["wug"])
    before = dict(wug, distraction_type="before", property_phrase="can sing.")
    far = dict(wug, distraction_type="far")
    (directory / "comps_wugs.jsonl").write_text(
        json.dumps(dict(wug, distraction_type="base")) + "\n" + json.dumps(before) + "\n"
    )
    (directory / "comps_wugs_dist.jsonl").write_text(json.dumps(before) + "\n" + json.dumps(far) + "\n")
    stimuli, rejects = released.read_release(directory)
    assert stimuli.groupby("subset").size().to_dict() == {
        "base": 1,
        "wugs": 1,
        "wugs_dist_before": 1,
        "wugs_dist_in_between": 1,
    }
    assert rejects[["file", "reason", "n"]].to_dict("records") == [
        {"file": "comps_wugs_dist.jsonl", "reason": "duplicate_record", "n": 1}
    ]
    (directory / "comps_wugs_dist.jsonl").write_text(
        json.dumps(far) + "\n" + json.dumps(dict(before, property_phrase="can fly.")) + "\n"
    )
    with pytest.raises(
        KnowprobeError,
        match=r"comps_wugs_dist.jsonl:2: id 0 of wugs_dist_before is another pair's in comps_wugs.jsonl:2",
    ):
        released.read_release(directory)
