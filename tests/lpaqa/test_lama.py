import json

import pandas as pd
import pytest

from knowprobe import contracts
from knowprobe.io import KnowprobeError
from knowprobe.lpaqa import lama

from conftest import require_shared


def write_lines(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def trex_line(uuid, sub, obj, relation="P19"):
    return json.dumps(
        {
            "uuid": uuid,
            "sub_uri": "Q1",
            "sub_label": sub,
            "obj_uri": "Q2",
            "obj_label": obj,
            "predicate_id": relation,
            "evidences": [],
        }
    )


@pytest.fixture
def lama_dir(tmp_path):
    write_lines(
        tmp_path / "relations.jsonl",
        [
            json.dumps({"relation": "P19", "template": "[X] was born in [Y] ."}),
            json.dumps({"relation": "P166", "template": "[X] was awarded the [Y] ."}),
        ],
    )
    write_lines(
        tmp_path / "TREx" / "P19.jsonl", [trex_line("a", "Dante", "Florence"), trex_line("b", "Mozart", "Salzburg")]
    )
    return tmp_path


def test_trex_reads_facts_and_reports_relations_without_file(lama_dir, caplog):
    relations = lama.read_relations(lama_dir / "relations.jsonl")
    with caplog.at_level("INFO"):
        facts = lama.read_trex(lama_dir, relations)
    assert list(facts.columns) == contracts.FACTS.columns
    assert facts[["relation", "fact_id", "sub_label", "obj_label"]].values.tolist() == [
        ["P19", "a", "Dante", "Florence"],
        ["P19", "b", "Mozart", "Salzburg"],
    ]
    assert "P166" in caplog.text


def test_a_reused_uuid_is_counted_and_dropped_and_the_contract_holds_ids_unique(lama_dir, tmp_path, caplog):
    """Within a relation or across relations, a fact reusing a uuid is left out (first kept) and
    counted; a facts table with a repeated fact_id is refused on writing and on reading."""
    write_lines(
        lama_dir / "TREx" / "P19.jsonl",
        [trex_line("a", "Dante", "Florence"), trex_line("b", "Mozart", "Salzburg"), trex_line("a", "Liszt", "Raiding")],
    )
    write_lines(lama_dir / "TREx" / "P166.jsonl", [trex_line("b", "Curie", "Nobel Prize", relation="P166")])
    with caplog.at_level("WARNING"):
        facts = lama.read_trex(lama_dir, lama.read_relations(lama_dir / "relations.jsonl"))
    assert list(facts["sub_label"]) == ["Dante", "Mozart"]
    assert "2 facts reuse a uuid" in caplog.text
    contracts.write(facts, tmp_path / "facts.parquet", contracts.FACTS)
    doubled = facts.assign(fact_id="a")
    with pytest.raises(KnowprobeError, match="1 fact_id values repeat .e.g. 'a'.; a facts table holds fact_id unique"):
        contracts.write(doubled, tmp_path / "bad.parquet", contracts.FACTS)
    import pyarrow.parquet as pq

    pq.write_table(contracts.to_table(doubled, contracts.FACTS).replace_schema_metadata(
        contracts.FACTS.arrow_schema().metadata), tmp_path / "bad.parquet")  # fmt: skip
    with pytest.raises(KnowprobeError, match="bad.parquet: 1 fact_id values repeat"):
        contracts.read(tmp_path / "bad.parquet", contracts.FACTS)


def test_a_label_far_beyond_any_model_is_counted_and_left_out(lama_dir, caplog):
    """Issue 54: a 5 MB object was imported without a word, then tokenized for minutes."""
    huge = "Florence " * 600_000
    write_lines(lama_dir / "TREx" / "P19.jsonl", [trex_line("a", "Dante", huge), trex_line("b", "Mozart", "Salzburg")])
    with caplog.at_level("WARNING"):
        facts = lama.read_trex(lama_dir, lama.read_relations(lama_dir / "relations.jsonl"))
    assert list(facts["sub_label"]) == ["Mozart"]
    assert "1 facts have a label longer than 100,000 characters and are left out (too_long), first P19 a:" in (
        caplog.text
    )
    assert f"({len(huge.strip()):,} characters)" in caplog.text and huge.strip() not in caplog.text


def test_fact_line_that_is_not_json_names_file_and_line(lama_dir):
    path = lama_dir / "TREx" / "P19.jsonl"
    write_lines(path, [trex_line("a", "Dante", "Florence"), '{"uuid": "b", "sub_label": '])
    relations = lama.read_relations(lama_dir / "relations.jsonl")
    with pytest.raises(KnowprobeError, match=rf"{path}:2: not valid JSON"):
        lama.read_trex(lama_dir, relations)


def test_fact_without_object_label_names_the_key(lama_dir):
    path = lama_dir / "TREx" / "P19.jsonl"
    write_lines(path, [json.dumps({"uuid": "a", "sub_label": "Dante"})])
    with pytest.raises(KnowprobeError, match=rf"{path}:1: missing key 'obj_label'"):
        lama.read_trex(lama_dir, lama.read_relations(lama_dir / "relations.jsonl"))


def test_relation_template_without_slot_names_file_and_line(lama_dir):
    write_lines(
        lama_dir / "relations.jsonl",
        [
            json.dumps({"relation": "P19", "template": "[X] was born in [Y] ."}),
            json.dumps({"relation": "P20", "template": "[X] died ."}),
        ],
    )
    with pytest.raises(KnowprobeError, match=r"relations.jsonl:2: template .* has 0 \[Y\]"):
        lama.read_relations(lama_dir / "relations.jsonl")


def test_missing_file_and_unknown_relation_are_clear_errors(lama_dir):
    with pytest.raises(KnowprobeError, match="nowhere.jsonl: file not found"):
        lama.read_relations(lama_dir / "nowhere.jsonl")
    relations = lama.read_relations(lama_dir / "relations.jsonl")
    with pytest.raises(KnowprobeError, match="lama.relations: 'P999'"):
        lama.read_trex(lama_dir, relations, ["P999"])


def test_manual_prompts_include_google_re():
    import pandas as pd

    relations = pd.DataFrame([{"relation": "P19", "template": "[X] was born in [Y] ."}])
    prompts = lama.manual_prompts(relations, {"date_of_birth": "[X] (born [Y])."})
    assert prompts[["relation", "template", "source"]].values.tolist() == [
        ["P19", "[X] was born in [Y] .", "manual"],
        ["date_of_birth", "[X] (born [Y]).", "manual"],
    ]
    with pytest.raises(KnowprobeError, match="lama.google_re_templates.date_of_birth"):
        lama.manual_prompts(relations, {"date_of_birth": "[X] (born)."})


def test_real_lama_files_parse():
    data = require_shared("lama")
    relations = lama.read_relations(data / "relations.jsonl")
    assert len(relations) == 46
    present = sorted(p.stem for p in (data / "TREx").glob("P*.jsonl"))
    facts = lama.read_trex(data, relations, present)
    assert facts["relation"].nunique() == len(present)
    assert facts["fact_id"].is_unique
    google = lama.read_google_re(data)
    assert google.groupby("relation").size().to_dict() == {
        "date_of_birth": 1825,
        "place_of_birth": 2937,
        "place_of_death": 766,
    }
    assert (google["judgments_yes"] + google["judgments_no"] > 0).all()


def test_a_per_relation_sample_is_seeded_per_relation_and_counted(caplog):
    """lpaqa.lama.per_relation: each relation draws its own facts (in the file's order), so that
    another relation in the selection changes nothing, and what is left out is logged."""
    facts = pd.DataFrame(
        {
            "relation": ["P19"] * 10 + ["P27"] * 3 + ["place_of_birth"] * 6,
            "fact_id": [f"f{i}" for i in range(19)],
        }
    )
    with caplog.at_level("INFO"):
        sampled = lama.sample_per_relation(facts, 4, seed=0)
    assert sampled.groupby("relation", sort=False).size().to_dict() == {"P19": 4, "P27": 3, "place_of_birth": 4}
    p19 = sampled[sampled["relation"] == "P19"]["fact_id"].tolist()
    assert p19 == sorted(p19, key=lambda f: int(f[1:]))  # the file's order
    alone = lama.sample_per_relation(facts[facts["relation"] == "P19"], 4, seed=0)
    assert alone["fact_id"].tolist() == p19
    assert lama.sample_per_relation(facts, 4, seed=1)["fact_id"].tolist() != sampled["fact_id"].tolist()
    assert "11 of 19 facts kept, 8 left out" in caplog.text
    assert lama.sample_per_relation(facts, None) is facts


def test_a_runs_own_draw_comes_after_the_filter_and_keeps_its_objects(caplog):
    """lpaqa.probe.sample: a run asked N facts a relation gets N of those LAMA's filter kept for
    it (the draw of lama.per_relation), the rest counted as not_sampled beside the filter's own
    drops; the objects of every kept fact are kept apart, the statement score's C_r."""
    kept = pd.DataFrame(
        {
            "relation": ["P19"] * 6 + ["P36"] * 2,
            "fact_id": [f"f{i}" for i in range(8)],
            "obj_label": ["Paris", "Rome", "Paris", "Lyon", "Nice", "Rome", "Oslo", "Bern"],
        },
        index=range(10, 18),  # a filter's kept rows keep the table's index
    )
    filtered = pd.DataFrame([{"relation": "P19", "reason": "not_candidate", "description": "...", "n": 3}])
    assert lama.objects_by_relation(kept) == {"P19": ["Lyon", "Nice", "Paris", "Rome"], "P36": ["Bern", "Oslo"]}
    with caplog.at_level("INFO"):
        drawn, dropped = lama.sample_run(kept, filtered, 3, seed=0)
    assert drawn.groupby("relation").size().to_dict() == {"P19": 3, "P36": 2}
    assert drawn["fact_id"].tolist() == lama.sample_per_relation(kept, 3)["fact_id"].tolist()  # the same draw
    assert list(drawn.index) == list(range(5))
    counted = dropped[["relation", "reason", "n"]].values.tolist()
    assert counted == [["P19", "not_candidate", 3], ["P19", "not_sampled", 3]]
    assert "5 of 8 facts kept, 3 not_sampled" in caplog.text
    assert lama.sample_run(kept, filtered, None) == (kept, filtered)
    alone, counted = lama.sample_run(kept, filtered.iloc[:0], 3, seed=0)
    assert counted["reason"].tolist() == ["not_sampled"] and alone.equals(drawn)
