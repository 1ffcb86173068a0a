import json

import numpy as np
import pandas as pd
import pytest

from knowprobe.io import KnowprobeError
from knowprobe.lpaqa import paper, trex_train

from conftest import ROOT, peak_rss_increase, require_shared, write_wikidata_tables


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


def pandas_reference(claims, entities, test_facts, relations, candidate_words, per_relation, seed):
    """T-REx-train the straightforward way, every table in pandas (how the stage was written
    before issue 30 made it stream): the reference the streamed build is held to."""
    labels = entities[~entities["qid"].duplicated()].set_index("qid")["label"]
    years = claims["object"].drop_duplicates()
    years = years[years.str.fullmatch(r"[0-9]+")]
    labels = pd.concat([labels, pd.Series(years.to_numpy(), index=years.to_numpy())])
    allowed = set.intersection(*candidate_words)
    test_pairs = set(zip(test_facts["relation"], test_facts["sub_uri"], test_facts["obj_uri"]))
    frames, drops = [], []
    for relation in relations:
        pairs = claims.loc[claims["property"] == relation, ["subject", "object"]]
        counts = {}
        before = len(pairs)
        pairs = pairs.drop_duplicates()
        counts["duplicate"] = before - len(pairs)
        pairs = pairs.assign(sub_label=pairs["subject"].map(labels), obj_label=pairs["object"].map(labels))
        keep = pairs["sub_label"].notna() & pairs["obj_label"].notna()
        counts["no_label"] = int((~keep).sum())
        pairs = pairs[keep]
        keep = ~pairs["sub_label"].str.contains(r"\s", regex=True) & ~pairs["obj_label"].str.contains(r"\s", regex=True)
        counts["not_single_word"] = int((~keep).sum())
        pairs = pairs[keep]
        keep = pairs["obj_label"].isin(allowed)
        counts["not_candidate"] = int((~keep).sum())
        pairs = pairs[keep]
        keep = ~pd.Series(
            [(relation, s, o) in test_pairs for s, o in zip(pairs["subject"], pairs["object"])],
            index=pairs.index,
            dtype=bool,
        )
        counts["in_test_set"] = int((~keep).sum())
        pairs = pairs[keep].sort_values(["subject", "object"], kind="stable").reset_index(drop=True)
        if len(pairs) > per_relation:
            chosen = np.sort(
                trex_train.relation_seed(seed, relation).choice(len(pairs), size=per_relation, replace=False)
            )
            counts["not_sampled"] = len(pairs) - per_relation
            pairs = pairs.iloc[chosen]
        frames.append(
            pd.DataFrame(
                {
                    "relation": relation,
                    "sub_uri": pairs["subject"].to_numpy(),
                    "sub_label": pairs["sub_label"].to_numpy(),
                    "obj_uri": pairs["object"].to_numpy(),
                    "obj_label": pairs["obj_label"].to_numpy(),
                }
            )
        )
        drops += [(relation, r, n) for r, n in counts.items() if n]
    return pd.concat(frames, ignore_index=True), drops


def test_the_streamed_build_gives_what_the_pandas_reading_gave(tmp_path):
    """Issue 30: T-REx-train streams the Wikidata stage's files (a byte of flags per entity, two
    integers per claim) instead of holding both tables in pandas; on a world with repeated claims
    and entities, unlabelled entities, labels with a non-breaking or other Unicode space, years,
    ids of other shapes and test pairs, it gives the same facts in the same order and the same
    drop counts, from files and from frames."""
    rng = np.random.default_rng(0)
    n = 3000
    words = [f"w{i}" for i in range(n)]
    spaces = [" ", "\u00a0", "\u2009", "\t", "\u3000"]  # Python's \s holds them all
    labels = [word if i % 5 else word + spaces[i % 25 // 5] + "x" for i, word in enumerate(words)]
    qids = [f"Q{i}" for i in range(n)] + ["Q5", "Q7", "Q01", "X9"]  # Q5 and Q7 twice, the first counts
    entities = pd.DataFrame({"qid": qids, "label": labels + ["again", "other", "w1", "w2"]})
    entities = entities[entities["qid"] != "Q11"]  # Q11 unlabelled (no entities row)
    relations = ["P19", "P27", "P569", "P31"]
    rows = []
    for relation in relations:
        for _ in range(1500):
            subject = f"Q{rng.integers(0, n)}"
            obj = str(rng.integers(1500, 2000)) if relation == "P569" else f"Q{rng.integers(0, 60)}"
            rows.append((subject, relation, obj))
    rows += [("Q01", "P19", "Q3"), ("Q3", "P19", "Q01"), ("X9", "P27", "Q11"), ("Q2", "P31", "0042")]
    claims = pd.DataFrame(rows * 1 + rows[:200], columns=["subject", "property", "object"]).assign(rank="normal")
    claims = claims.sample(frac=1.0, random_state=2).reset_index(drop=True)
    allowed = [
        set(words[:40]) | {str(y) for y in range(1500, 1800)} | {"w1", "w2"},
        set(words[:50]) | {str(y) for y in range(1500, 2000)} | {"w1", "w2"},
    ]
    test = claims.sample(n=120, random_state=3)[["property", "subject", "object"]]
    test.columns = ["relation", "sub_uri", "obj_uri"]
    expected, expected_drops = pandas_reference(claims, entities, test, relations, allowed, 100, 7)
    facts, dropped = trex_train.build(claims, entities, test, relations, allowed, per_relation=100, seed=7)
    assert (
        facts[["relation", "sub_uri", "sub_label", "obj_uri", "obj_label"]].values.tolist() == expected.values.tolist()
    )
    assert [tuple(r) for r in dropped[["relation", "reason", "n"]].values.tolist()] == expected_drops
    assert {"not_single_word", "not_candidate", "in_test_set", "not_sampled", "no_label", "duplicate"} <= set(
        dropped["reason"]
    )
    # from the Wikidata stage's files, as the rule reads them
    import pyarrow.dataset as ds

    claims.to_parquet(tmp_path / "claims.parquet", row_group_size=500)
    entities.to_parquet(tmp_path / "entities.parquet", row_group_size=700)
    from_files, dropped_files = trex_train.build_from(
        ds.dataset(tmp_path / "claims.parquet"),
        ds.dataset(tmp_path / "entities.parquet"),
        test,
        relations,
        allowed,
        100,
        7,
    )
    pd.testing.assert_frame_equal(from_files, facts)
    pd.testing.assert_frame_equal(dropped_files, dropped)


def test_building_from_files_holds_integers_not_the_tables(tmp_path):
    """Issue 30: T-REx-train from 3 million claims and a million entities raises a fresh process's
    peak RSS by less than 400 MB, most of it Arrow's fixed read buffers (the pandas reading took
    904 MB here, growing with both tables: both as frames of strings and a map over every label;
    the rehearsal projected 76 GB for a full dump)."""
    words = write_wikidata_tables(tmp_path, 1_000_000, 3_000_000)
    (tmp_path / "words.txt").write_text("\n".join(words))
    increase = peak_rss_increase(
        setup="import pandas as pd, pyarrow.dataset as ds\nfrom knowprobe.lpaqa import trex_train",
        code=(
            f"words = set(open({str(tmp_path / 'words.txt')!r}).read().split())\n"
            "test = pd.DataFrame(columns=['relation', 'sub_uri', 'obj_uri'])\n"
            f"claims = ds.dataset({str(tmp_path / 'claims.parquet')!r})\n"
            f"entities = ds.dataset({str(tmp_path / 'entities.parquet')!r})\n"
            "relations = ['P31', 'P17', 'P19', 'P27', 'P106']\n"
            "facts, dropped = trex_train.build_from(claims, entities, test, relations, [words])\n"
            "assert len(facts) == 5000, len(facts)"
        ),
    )
    assert increase < 400, f"{increase:.0f} MB"


def test_the_released_facts_are_drawn_down_to_per_relation_and_counted():
    """trex_train.per_relation applies to LPAQA's release as to the dump's pairs (it once kept the
    whole release whatever it said): the same seeded draw, in the file's order, counted as
    not_sampled; the default 1,000 keeps the release (at most 1,000 a relation) whole."""
    facts = pd.DataFrame(
        {
            "relation": ["P19"] * 6 + ["P27"] * 2,
            "fact_id": [f"f{i}" for i in range(8)],
            "sub_uri": "Q1",
            "obj_uri": "Q2",
        }
    )
    kept, dropped = trex_train.sampled(facts, 3, seed=0)
    assert kept.groupby("relation").size().to_dict() == {"P19": 3, "P27": 2}
    positions = trex_train.draw(6, 3, 0, "P19")
    assert kept[kept["relation"] == "P19"]["fact_id"].tolist() == [f"f{i}" for i in positions]
    assert dropped[["relation", "reason", "n"]].values.tolist() == [["P19", "not_sampled", 3]]
    whole, none = trex_train.sampled(facts, 1000, seed=0)
    assert whole["fact_id"].tolist() == facts["fact_id"].tolist() and none.empty
