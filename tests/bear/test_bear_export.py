"""Export: knowprobe's fact sets with templates (LAMA-format facts with a prompt set, S-TEST's
triples) written as BEAR-format directories that lm-pub-quiz loads; the command line, and a
BEAR-format directory exported again as it was."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from knowprobe import contracts
from knowprobe.bear import export

from conftest import ROOT

FACTS = pd.DataFrame(
    {
        "relation": ["P36", "P36", "P36", "P19", "P19", "P36"],
        "fact_id": ["a", "b", "c", "d", "e", "f"],
        "sub_uri": ["Q142", "Q183", "Q668", "Q254", "Q937", "Q142"],
        "sub_label": ["France", "Germany", "India", "Mozart", "Einstein", "France"],
        "obj_uri": ["Q90", "Q64", "Q987", "Q34713", "Q3012", "Q90"],
        "obj_label": ["Paris", "Berlin", "New Delhi", "Salzburg", "Ulm", "Paris"],
        "origin": "lama-trex",
        "judgments_yes": 0,
        "judgments_no": 0,
    }
)
PROMPTS = pd.DataFrame(
    {
        "relation": ["P36", "P36", "P36", "P19", "P19", "P17"],
        "template": [
            "The capital of [X] is [Y] .",
            "[Y] is the capital of [X] .",
            "[X] 's capital , [Y] .",
            "[X] was born in [Y] .",
            "[X] was born in [Y] , the city .",
            "[X] is in [Y] .",
        ],
        "source": "mid",
        "rank": [1, 0, 2, 0, 1, 0],
        "score": 1.0,
    }
)


def test_lama_facts_with_a_prompt_set(tmp_path):
    lm_pub_quiz = pytest.importorskip("lm_pub_quiz")
    contracts.write(FACTS.drop_duplicates("fact_id"), tmp_path / "facts.parquet", contracts.FACTS)
    contracts.write(PROMPTS, tmp_path / "prompts.parquet", contracts.PROMPTS)
    code = export.main(
        [str(tmp_path / "facts.parquet"), "--templates", str(tmp_path / "prompts.parquet"), "--top", "2"]
        + ["--out", str(tmp_path / "out")]
    )
    assert code == 0
    metadata = json.loads((tmp_path / "out/metadata_relations.json").read_text())
    # the best two by rank; the answer space in order of first appearance; a repeated fact once
    assert metadata["P36"]["templates"] == ["[Y] is the capital of [X] .", "The capital of [X] is [Y] ."]
    assert metadata["P36"]["answer_space_labels"] == ["Paris", "Berlin", "New Delhi"]
    assert metadata["P36"]["answer_space_ids"] == ["Q90", "Q64", "Q987"]
    loaded = lm_pub_quiz.Dataset.from_path(tmp_path / "out")
    assert sorted(loaded.relation_codes) == ["P19", "P36"]
    table = loaded["P36"].instance_table
    assert list(table["sub_label"]) == ["France", "Germany", "India"] and list(table["answer_idx"]) == [0, 1, 2]


def test_stest_triples_fine_or_coarse(tmp_path):
    triples = pd.DataFrame(
        {
            "relation": ["P19", "P19"],
            "sub_uri": ["Q254", "Q937"],
            "sub_label": ["Mozart", "Einstein"],
            "fine_uri": ["Q34713", "Q3012"],
            "fine_label": ["Salzburg", "Ulm"],
            "fine_distance": 1.0,
            "coarse_uri": ["Q40", "Q183"],
            "coarse_label": ["Austria", "Germany"],
            "coarse_distance": 3.0,
            "origin": "wikidata",
        }
    )
    contracts.write(triples, tmp_path / "benchmark.parquet", contracts.STEST_TRIPLES)
    (tmp_path / "templates.jsonl").write_text(
        json.dumps({"relation": "P19", "template": "[X] was born in [Y]."}) + "\n"
    )
    for obj, labels in [("fine", ["Salzburg", "Ulm"]), ("coarse", ["Austria", "Germany"])]:
        relations, instances, left_out = export.from_facts(
            export.read_facts(tmp_path / "benchmark.parquet", obj), export.read_templates(tmp_path / "templates.jsonl")
        )
        assert list(relations.loc[0, "answer_space_labels"]) == labels and list(instances["answer_idx"]) == [0, 1]


def test_left_out_is_counted():
    templates = PROMPTS[PROMPTS["relation"] != "P19"][["relation", "template"]]
    templates = pd.concat([templates, pd.DataFrame({"relation": ["P36"], "template": ["no slots"]})])
    facts = FACTS.rename(columns={"sub_uri": "sub_id", "obj_uri": "obj_id"})[export.FACT_COLUMNS]
    relations, instances, left_out = export.from_facts(facts, templates)
    assert list(relations["relation"]) == ["P36"] and len(instances) == 3
    assert left_out == {"relations_without_template": 1, "bad_templates": 1, "duplicate_facts": 1}


def test_a_bear_directory_exported_again_is_unchanged(tmp_path, capsys):
    assert export.main([str(ROOT / "resources/demo/bear"), "--out", str(tmp_path / "out")]) == 0
    assert "4 relations" in capsys.readouterr().out
    for path in (ROOT / "resources/demo/bear").glob("*.jsonl"):
        before = [json.loads(line) for line in path.read_text().splitlines()]
        assert [json.loads(line) for line in (tmp_path / "out" / path.name).read_text().splitlines()] == before


def test_a_table_of_another_kind_is_one_line(tmp_path, capsys):
    contracts.write(PROMPTS, tmp_path / "prompts.parquet", contracts.PROMPTS)
    code = export.main([str(tmp_path / "prompts.parquet"), "--templates", "x.jsonl", "--out", str(tmp_path / "o")])
    assert code == 1
    assert "a table of contract prompts; give facts, model_facts or stest_triples" in capsys.readouterr().err
