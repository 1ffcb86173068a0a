"""Issue 41 item 1: facts whose answers may be several words and tokens, from the Wikidata stage's
tables, and their objects' token counts per model."""

import json
import re

import pandas as pd
import pytest
import yaml

from knowprobe import contracts
from knowprobe.lpaqa import multitoken, trex_train

from conftest import DEMO, ROOT, copy_project, snakemake


@pytest.fixture
def wikidata():
    entities = pd.DataFrame(
        {
            "qid": [f"Q{i}" for i in range(1, 12)],
            "label": [
                "France",
                "Paris",
                "Germany",
                "Berlin",
                "United Kingdom",
                "London",
                "Italy",
                "Città di Roma",
                "Lutetia",
                "French language",
                "German",
            ],
            "aliases": [["FR", "French Republic"], None, None, None, ["UK", "Britain"]] + [None] * 5 + [["Deutsch"]],
        }
    )
    claims = pd.DataFrame(
        [
            ("Q1", "P36", "Q2"),  # LAMA's test fact
            ("Q1", "P36", "Q9"),  # another capital of a test subject: leaks the test fact's question
            ("Q3", "P36", "Q4"),
            ("Q3", "P36", "Q4"),  # stated twice
            ("Q5", "P36", "Q6"),  # a subject of two words
            ("Q7", "P36", "Q8"),  # an object of three words
            ("Q99", "P36", "Q2"),  # a subject without a label
            ("Q1", "P37", "Q10"),  # France is a test subject of P36 only: kept in P37
            ("Q3", "P37", "Q11"),  # Germany is a test subject of P37
            ("Q1", "P31", "Q7"),  # not a relation of the test set
        ],
        columns=["subject", "property", "object"],
    ).assign(rank="normal")
    test = pd.DataFrame(
        {"relation": ["P36", "P37"], "sub_uri": ["Q1", "Q3"], "obj_uri": ["Q2", "Q11"]},
    )
    return entities, claims, test


def test_multi_word_objects_kept_test_subjects_dropped_and_every_drop_counted(wikidata):
    entities, claims, test = wikidata
    facts, dropped = multitoken.build(claims, entities, test, per_relation=10)
    assert facts[["relation", "sub_label", "obj_label"]].values.tolist() == [
        ["P36", "Germany", "Berlin"],
        ["P36", "United Kingdom", "London"],
        ["P36", "Italy", "Città di Roma"],
        ["P37", "France", "French language"],
    ]
    counts = {(r, reason): n for r, reason, n in dropped[["relation", "reason", "n"]].itertuples(index=False)}
    assert counts == {
        ("P36", "duplicate"): 1,
        ("P36", "no_label"): 1,
        ("P36", "subject_in_test_set"): 2,
        ("P37", "subject_in_test_set"): 1,
    }
    assert set(dropped["description"]) == {trex_train.DROP_REASONS[r] for r in dropped["reason"]}
    # T-REx-train's filters on the same tables keep only the one-word, single-token pair
    single, _ = trex_train.build(claims, entities, test, ["P36"], [{"Berlin", "London"}], per_relation=10)
    assert single["obj_label"].tolist() == ["Berlin"]


def test_aliases_carried_and_the_table_meets_its_contract(wikidata, tmp_path):
    entities, claims, test = wikidata
    facts, _ = multitoken.build(claims, entities, test, per_relation=10)
    assert facts.columns.tolist() == contracts.MULTITOKEN_FACTS.columns
    aliases = {row.fact_id: (row.sub_aliases, row.obj_aliases) for row in facts.itertuples()}
    assert aliases == {
        "P36-Q3-Q4": ([], []),
        "P36-Q5-Q6": (["UK", "Britain"], []),
        "P36-Q7-Q8": ([], []),
        "P37-Q1-Q10": (["FR", "French Republic"], []),
    }
    path = tmp_path / "facts.parquet"
    contracts.write(facts, path, contracts.MULTITOKEN_FACTS)
    back = contracts.read(path, contracts.MULTITOKEN_FACTS)
    assert [list(a) for a in back["sub_aliases"]] == [a for a, _ in aliases.values()]


def test_the_wikidata_stages_parquet_files_give_what_the_tables_in_memory_give(wikidata, tmp_path):
    """The rule streams the stage's files (aliases a Parquet list column), the tests above build
    from frames: both must give the same facts and drops."""
    import pyarrow.dataset as ds

    entities, claims, test = wikidata
    stage = entities.assign(
        label_lang="en", aliases_lang=[None if a is None else "en" for a in entities["aliases"]], enwiki=None
    )
    contracts.write(stage, tmp_path / "entities.parquet", contracts.ENTITIES)
    contracts.write(claims, tmp_path / "claims.parquet", contracts.CLAIMS)
    streamed, streamed_drops = multitoken.build_from(
        ds.dataset(tmp_path / "claims.parquet"), ds.dataset(tmp_path / "entities.parquet"), test, per_relation=10
    )
    facts, dropped = multitoken.build(claims, entities, test, per_relation=10)
    pd.testing.assert_frame_equal(streamed, facts)
    pd.testing.assert_frame_equal(streamed_drops, dropped)
    assert streamed.loc[streamed["fact_id"] == "P36-Q5-Q6", "sub_aliases"].item() == ["UK", "Britain"]


def many_pairs(n=300):
    """n claims of P19 whose labels are two words, from n subjects to 7 objects."""
    entities = pd.DataFrame({"qid": [f"Q{i}" for i in range(2 * n)], "label": [f"w {i}" for i in range(2 * n)]})
    claims = pd.DataFrame(
        {"subject": [f"Q{i}" for i in range(n)], "property": "P19", "object": [f"Q{n + i % 7}" for i in range(n)]}
    ).assign(rank="normal")
    test = pd.DataFrame({"relation": ["P19"], "sub_uri": ["Q-none"], "obj_uri": ["Q-none"]})
    return entities, claims, test


def test_per_relation_cap_and_seeded_draw_are_stable():
    entities, claims, test = many_pairs()
    first, dropped = multitoken.build(claims, entities, test, per_relation=50, seed=3)
    assert len(first) == 50
    assert dropped[["reason", "n"]].values.tolist() == [["not_sampled", 250]]
    again, _ = multitoken.build(claims.sample(frac=1.0, random_state=1), entities, test, per_relation=50, seed=3)
    pd.testing.assert_frame_equal(first, again)
    other, _ = multitoken.build(claims, entities, test, per_relation=50, seed=4)
    assert set(first["fact_id"]) != set(other["fact_id"])


SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def wordpiece():
    from transformers import BertTokenizerFast

    vocab = SPECIALS + ["Paris", "New", "York", "##ton"]
    tokenizer = BertTokenizerFast(vocab={t: i for i, t in enumerate(vocab)}, do_lower_case=False)
    assert len(tokenizer) == 9
    return tokenizer


def byte_level_bpe():
    """A GPT-2-style tokenizer that knows " Paris" (after a space) as one token and "Paris" as three."""
    from transformers import GPT2TokenizerFast

    vocab = ["<|endoftext|>", "Ġ", "P", "a", "r", "i", "s", "ĠP", "ar", "is", "ĠPar", "ĠParis"]
    merges = [("Ġ", "P"), ("a", "r"), ("i", "s"), ("ĠP", "ar"), ("ĠPar", "is")]
    tokenizer = GPT2TokenizerFast(vocab={t: i for i, t in enumerate(vocab)}, merges=merges)
    assert len(tokenizer) == 12
    return tokenizer


def test_token_counts_take_the_label_as_it_sits_after_a_space():
    bert, gpt2 = wordpiece(), byte_level_bpe()
    # WordPiece: the label alone (the space is stripped); an unknown word is one [UNK]
    assert multitoken.token_counts(bert, ["Paris", "New York", "Newton", "Zurich"]) == [1, 2, 2, 1]
    # byte-level BPE: " Paris" is one token, where "Paris" at a text's start would be three
    assert gpt2(["Paris"], add_special_tokens=False)["input_ids"] == [[2, 8, 9]]
    assert multitoken.token_counts(gpt2, ["Paris", "Paris Paris"]) == [1, 2]
    assert multitoken.token_counts(bert, []) == []


def test_object_tokens_is_a_long_table_per_fact_and_model(tmp_path):
    facts = pd.DataFrame({"relation": ["P36", "P37"], "fact_id": ["a", "b"], "obj_label": ["Paris", "New York"]})
    tokens = multitoken.object_tokens(facts, {"bert": wordpiece(), "other": wordpiece()})
    assert tokens.values.tolist() == [
        ["P36", "a", "bert", 1],
        ["P37", "b", "bert", 2],
        ["P36", "a", "other", 1],
        ["P37", "b", "other", 2],
    ]
    contracts.write(tokens, tmp_path / "tokens.parquet", contracts.OBJECT_TOKENS)


def planned(project, *configfiles):
    """Jobs per rule of a dry run of the demo config (and ``configfiles`` over it)."""
    result = snakemake(project, "-n", "--quiet", "rules", *DEMO, *configfiles)
    return dict(re.findall(r"^(\w+)\s+(\d+)$", result.stdout + result.stderr, re.MULTILINE))


def test_rule_is_planned_only_when_enabled(tmp_path):
    """The demo builds and asks the multi-token facts (so its report and the contract test see
    them); switched off, their rules and nothing else leave the plan: the facts, an object-token
    count and a probe per model of lpaqa.multitoken.models (null: the three tiny ones LPAQA
    probes), the tables, the figure
    and the three tables' report pages (config.yaml's default is off)."""
    project = copy_project(tmp_path)
    enabled = planned(project)
    # snakemake's --config passes nested values as strings ('false'), so the switch goes in a file
    (project / "multitoken.yaml").write_text("lpaqa:\n  multitoken:\n    enabled: false\n")
    default = planned(project, "multitoken.yaml")
    multitoken = {
        "lpaqa_multitoken_facts": 1,
        "lpaqa_multitoken_object_tokens": 3,
        "lpaqa_multitoken_probe": 3,
        "lpaqa_multitoken_tables": 1,
        "lpaqa_multitoken_figure": 1,
    }
    assert not set(multitoken) & set(default)
    assert {rule: int(enabled.pop(rule)) for rule in multitoken} == multitoken
    # the report pages of the accuracy, facts and comparisons tables
    assert int(enabled.pop("table_html")) == int(default.pop("table_html")) + 3
    assert int(enabled.pop("total")) == int(default.pop("total")) + sum(multitoken.values()) + 3
    assert enabled == default  # nothing else planned or left out
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    assert config["lpaqa"]["multitoken"]["enabled"] is False
    # lpaqa.multitoken.models: a model LPAQA does not probe is one line (the demo names the tiny ones)
    (project / "models.yaml").write_text("lpaqa:\n  multitoken:\n    models: [tiny-demo-bert, nope]\n")
    result = snakemake(project, "-n", *DEMO, "models.yaml", check=False)
    assert result.returncode != 0
    assert "config lpaqa.multitoken.models: 'nope' is not a key of models" in result.stdout + result.stderr


def write_xfactr(root):
    """A folder in X-FACTR's layout: two relations' facts (one LAMA lacks) with bad lines, and aliases."""
    facts = root / "data" / "mTRExf" / "sub"
    facts.mkdir(parents=True)

    def fact(n, sub, sub_label, obj, obj_label):
        return json.dumps(
            {
                "uuid": f"u{n}",
                "predicate_id": "P36",
                "sub_uri": sub,
                "sub_label": sub_label,
                "obj_uri": obj,
                "obj_label": obj_label,
            }
        )

    (facts / "P36.jsonl").write_bytes(
        "\n".join(
            [
                fact(1, "Q142", "France", "Q90", "Paris"),
                fact(2, "Q414", "Argentina", "Q1486", "Buenos Aires"),
                fact(3, "Q142", "France", "Q90", "Paris"),  # the same pair again
                "{not json",
                json.dumps({"uuid": "u5", "sub_uri": "Q1", "sub_label": "X"}),  # no object
                fact(7, "Q7", "Y" * 5_000_000, "Q90", "Paris"),  # issue 54: a 5 MB subject, refused
                "",
            ]
        ).encode()
        + b"\xff\xfe\n"  # not UTF-8
    )
    (facts / "P1001.jsonl").write_text(fact(6, "Q1", "A", "Q2", "B") + "\n")
    aliases = root / "data" / "alias" / "mTRExf"
    aliases.mkdir(parents=True)
    (aliases / "en.txt").write_text("Q90\tCity of Light\tParis, France\nQ142\tFR\tFrench Republic\nnot a line\n")


def test_xfactr_facts_read_as_released_every_bad_line_counted(tmp_path):
    write_xfactr(tmp_path)
    test = pd.DataFrame({"relation": ["P36"], "sub_uri": ["Q0"], "obj_uri": ["Q0"]})
    facts, dropped = multitoken.read_xfactr(tmp_path, test)
    contracts.to_table(facts, contracts.MULTITOKEN_FACTS)
    assert facts[["fact_id", "sub_label", "obj_label", "origin"]].values.tolist() == [
        ["u1", "France", "Paris", "xfactr"],
        ["u2", "Argentina", "Buenos Aires", "xfactr"],
    ]
    assert facts["obj_aliases"].iloc[0] == ["City of Light", "Paris, France"]
    assert facts["sub_aliases"].iloc[0] == ["FR", "French Republic"] and facts["obj_aliases"].iloc[1] == []
    counts = {(r, reason): n for r, reason, n in dropped[["relation", "reason", "n"]].itertuples(index=False)}
    assert counts == {
        ("P36", "duplicate"): 1,
        ("P36", "invalid_json"): 1,
        ("P36", "missing_field"): 1,
        ("P36", "too_long"): 1,
        ("P36", "invalid_utf8"): 1,
        ("P1001", "not_a_lama_relation"): 1,
    }
    assert set(dropped["description"]) == {multitoken.XFACTR_DROP_REASONS[r] for r in dropped["reason"]}
    # the per-relation cap draws as T-REx-train does
    capped, dropped = multitoken.read_xfactr(tmp_path, test, per_relation=1, seed=3)
    assert len(capped) == 1 and dropped.set_index("reason").loc["not_sampled", "n"] == 1


def test_xfactr_folder_without_facts_is_one_error(tmp_path):
    with pytest.raises(Exception, match="no P\\*.jsonl files"):
        multitoken.read_xfactr(tmp_path, pd.DataFrame({"relation": ["P36"]}))


def test_xfactr_download_is_planned_and_checked_against_its_listing(tmp_path):
    """source: xfactr plans the pinned archive's download and unpacking in place of the Wikidata
    tables; the listing names the 46 relation files and the aliases at the pinned commit."""
    project = copy_project(tmp_path)
    (project / "xfactr.yaml").write_text("lpaqa:\n  multitoken:\n    source: xfactr\n")
    jobs = planned(project, "xfactr.yaml")
    assert jobs["lpaqa_download_xfactr"] == jobs["lpaqa_unpack_xfactr"] == "1"
    listing = (ROOT / "resources/checksums/xfactr-c1938ec.sha256").read_text().split("\n")
    names = [line.split("  ")[1] for line in listing if line and not line.startswith("#")]
    assert len(names) == 47 and "data/alias/mTRExf/en.txt" in names
    assert sum(name.startswith("data/mTRExf/sub/P") for name in names) == 46
