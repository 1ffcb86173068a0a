import json

import pandas as pd
import pytest

from knowprobe.io import KnowprobeError
from knowprobe.lpaqa import paper, trex_train

from conftest import ROOT, require_shared


@pytest.fixture
def wikidata():
    entities = pd.DataFrame(
        {
            "qid": [f"Q{i}" for i in range(1, 9)],
            "label": ["France", "Paris", "Germany", "Berlin", "United Kingdom", "London", "Italy", "Roma"],
        }
    )
    claims = pd.DataFrame(
        {
            "subject": ["Q1", "Q3", "Q5", "Q7", "Q3", "Q1", "Q99"],
            "property": ["P36", "P36", "P36", "P36", "P36", "P17", "P36"],
            "object": ["Q2", "Q4", "Q6", "Q8", "Q4", "Q1", "Q2"],
            "rank": "normal",
        }
    )
    test = pd.DataFrame({"relation": ["P36"], "sub_uri": ["Q1"], "obj_uri": ["Q2"]})
    return entities, claims, test


def test_filters_and_counts_every_dropped_pair(wikidata):
    entities, claims, test = wikidata
    candidates = [{"Paris", "Berlin", "London"}, {"Paris", "Berlin", "London", "Roma"}]  # Roma: one model only
    facts, dropped = trex_train.build(claims, entities, test, ["P36"], candidates, per_relation=10)
    assert facts[["sub_label", "obj_label"]].values.tolist() == [["Germany", "Berlin"]]
    assert dict(zip(dropped["reason"], dropped["n"])) == {
        "duplicate": 1,
        "no_label": 1,
        "not_single_word": 1,
        "not_candidate": 1,
        "in_test_set": 1,
    }
    assert set(facts.columns) >= {"relation", "sub_uri", "sub_label", "obj_uri", "obj_label", "origin"}


def many_pairs(n=300):
    entities = pd.DataFrame({"qid": [f"Q{i}" for i in range(2 * n)], "label": [f"w{i}" for i in range(2 * n)]})
    claims = pd.DataFrame(
        {
            "subject": [f"Q{i}" for i in range(n)],
            "property": "P19",
            "object": [f"Q{n + i % 7}" for i in range(n)],
            "rank": "normal",
        }
    )
    return entities, claims, {f"w{n + k}" for k in range(7)}


def test_same_seed_same_pairs_whatever_the_input_order():
    entities, claims, words = many_pairs()
    empty_test = pd.DataFrame(columns=["relation", "sub_uri", "obj_uri"])
    first, dropped = trex_train.build(claims, entities, empty_test, ["P19"], [words], per_relation=50, seed=3)
    shuffled = claims.sample(frac=1.0, random_state=1)
    again, _ = trex_train.build(shuffled, entities, empty_test, ["P19"], [words], per_relation=50, seed=3)
    other, _ = trex_train.build(claims, entities, empty_test, ["P19"], [words], per_relation=50, seed=4)
    assert len(first) == 50 and dict(zip(dropped["reason"], dropped["n"])) == {"not_sampled": 250}
    pd.testing.assert_frame_equal(first, again)
    assert set(first["sub_uri"]) != set(other["sub_uri"])


def test_statistics_as_lpaqa_table1():
    facts = pd.DataFrame(
        {
            "relation": ["P1"] * 4 + ["P2"] * 2,
            "sub_label": ["a", "a", "b", "c", "d", "e"],
            "obj_label": ["x", "x", "y", "z", "x", "x"],
        }
    )
    stats = trex_train.statistics(facts).set_index("relation")
    assert stats.loc["P1", ["pairs", "unique_subjects", "unique_objects"]].tolist() == [4, 3, 3]
    import math

    assert stats.loc["P1", "object_entropy"] == pytest.approx(-(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25)))
    assert stats.loc["P2", "object_entropy"] == 0


def test_lpaqa_release_reproduces_their_table1():
    directory = require_shared("lpaqa", "TREx_train")
    relations = sorted(p.stem for p in directory.glob("P*.jsonl"))
    facts = trex_train.read_lpaqa(directory, relations)
    assert len(facts) == 38896
    numbers = paper.load(ROOT / "resources/papers/lpaqa.yaml")
    table = paper.table1({"T-REx-train": facts}, numbers)
    assert table["ours"].tolist() == table["paper"].tolist() == [948.7, 880.1, 354.6, 4.4]
    assert table["difference"].tolist() == [0.0] * 4


def test_lpaqa_reader_errors(tmp_path):
    with pytest.raises(KnowprobeError, match="P19.jsonl: file not found"):
        trex_train.read_lpaqa(tmp_path, ["P19"])
    (tmp_path / "P19.jsonl").write_text(json.dumps({"sub_uri": "Q1", "obj_uri": "Q2", "sub_label": "a"}) + "\n")
    with pytest.raises(KnowprobeError, match="P19.jsonl:1: missing key 'obj_label'"):
        trex_train.read_lpaqa(tmp_path, ["P19"])


def test_train_dev_split_is_seeded_per_relation_and_keeps_lpaqas_share():
    facts = pd.DataFrame({"relation": ["P19"] * 10 + ["P20"] * 3, "fact_id": [str(i) for i in range(13)]})
    train, dev = trex_train.split(facts, 0.8, seed=0)
    assert train.groupby("relation").size().to_dict() == {"P19": 8, "P20": 2}  # int(0.8 * N)
    assert sorted(train["fact_id"].tolist() + dev["fact_id"].tolist(), key=int) == facts["fact_id"].tolist()
    assert train["fact_id"].tolist() == sorted(train["fact_id"].tolist(), key=int)  # in the facts' order
    again, _ = trex_train.split(
        facts.sample(frac=1, random_state=1).sort_values("fact_id", key=lambda s: s.astype(int)), 0.8, 0
    )
    assert again["fact_id"].tolist() == train["fact_id"].tolist()
    other, _ = trex_train.split(facts, 0.8, seed=1)
    assert other["fact_id"].tolist() != train["fact_id"].tolist()
    # another relation's presence changes nothing of P19's split
    alone, _ = trex_train.split(facts[facts["relation"] == "P19"], 0.8, 0)
    assert alone["fact_id"].tolist() == train[train["relation"] == "P19"]["fact_id"].tolist()


def _facts(rows):
    return pd.DataFrame(rows, columns=["relation", "sub_uri", "obj_uri"]).assign(
        fact_id=lambda f: f["relation"] + f["sub_uri"], sub_label="s", obj_label="o", origin="lpaqa"
    )


def test_lpaqas_release_loses_the_pairs_of_the_configured_test_set():
    train = _facts([("P19", "Q1", "Q2"), ("P19", "Q3", "Q4"), ("P36", "Q5", "Q6")])
    test = _facts([("P19", "Q3", "Q4"), ("P36", "Q7", "Q8")])
    kept, dropped = trex_train.without_test_pairs(train, test)
    assert kept[["relation", "sub_uri"]].values.tolist() == [["P19", "Q1"], ["P36", "Q5"]]
    assert dropped[["relation", "reason", "n"]].values.tolist() == [["P19", "in_test_set", 1]]


def test_an_empty_relation_warns_and_an_empty_train_set_stops(caplog):
    """Issue 16 item 6: when every pair was dropped the run went on with INFO lines only."""
    dropped = pd.DataFrame(
        [("P19", "not_single_word", "", 12), ("P36", "not_candidate", "", 3)],
        columns=["relation", "reason", "description", "n"],
    )
    facts = _facts([("P36", "Q5", "Q6")])
    with caplog.at_level("WARNING"):
        trex_train.check_not_empty(facts, dropped, ["P19", "P36"])
    assert "P19: no T-REx-train fact (dropped: not_single_word 12)" in caplog.text and "P36" not in caplog.text
    with pytest.raises(
        KnowprobeError,
        match=r"T-REx-train is empty for every relation \(dropped: not_candidate 3, not_single_word 12\)",
    ):
        trex_train.check_not_empty(facts.iloc[:0], dropped, ["P19", "P36"])
