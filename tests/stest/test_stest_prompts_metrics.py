"""S-TEST's prompts (CP from Table 1's templates, FP's demonstrations), p_r with ties and missing
objects, and the released files' reader."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from knowprobe.config import schema_defaults
from knowprobe.io import KnowprobeError
from knowprobe.stest import metrics, prompts, released

RELATIONS = schema_defaults("stest")["relations"]


def test_cascade_templates_are_table_4():
    table4 = {
        "P19": "[X] was born in [Y], which is located in [Y].",
        "P106": "[X] is a [Y] by profession, which belongs to [Y].",
        "P131": "[X] is located in [Y], which is located in [Y].",
        "P279": "[X] is a subclass of [Y], which is a subclass of [Y].",
        "P361": "[X] is part of [Y], which is part of [Y].",
    }
    for relation, spec in RELATIONS.items():
        assert prompts.cascade_template(spec["template"], spec["cascade"]) == table4[relation]
    with pytest.raises(KnowprobeError, match="final period"):
        prompts.cascade_template("[X] is part of [Y]", "which is part of [Y]")


def triples(n=30):
    return pd.DataFrame(
        {
            "relation": ["P131"] * n + ["P361"] * 4,
            "sub_label": [f"Town{i}" for i in range(n)] + ["palate", "tongue", "retina", "cornea"],
            "fine_label": [f"Region{i}" for i in range(n)] + ["mouth", "mouth", "eye", "eye"],
            "coarse_label": ["Italy"] * n + ["head"] * 4,
        }
    )


def test_demonstrations_are_seeded_k_others_of_the_relation():
    frame = triples()
    shots = prompts.demonstrations(frame["relation"], k=10, seed=0)
    for row, chosen in enumerate(shots):
        assert row not in chosen
        assert len(set(chosen)) == len(chosen)
        assert (frame["relation"].iloc[chosen] == frame["relation"].iloc[row]).all()
    assert all(len(shots[i]) == 10 for i in range(30))
    assert all(len(shots[i]) == 3 for i in range(30, 34))  # only three others in P361
    again = prompts.demonstrations(frame["relation"], k=10, seed=0)
    assert all((a == b).all() for a, b in zip(shots, again))
    other = prompts.demonstrations(frame["relation"], k=10, seed=1)
    assert any(set(a) != set(b) for a, b in zip(shots, other))


def test_the_authors_draw_as_their_code_makes_it():
    """The authors' code (their LAMA fork's batch_eval_KB_completion.py, per relation): the
    relation's facts in file order with repeated (subject, object) facts removed, random.seed(0),
    then for fact i random.sample(range(i) + range(i + 1, n), k=10), the demonstrations filled
    in with each fact's object and joined by ", "."""
    import random

    frame = triples(14)
    frame.loc[5, ["sub_label", "fine_label"]] = frame.loc[2, ["sub_label", "fine_label"]].to_numpy()  # a repeat
    located = frame[frame["relation"] == "P131"]
    facts = list(dict.fromkeys(zip(located["sub_label"], located["fine_label"])))  # file order, repeats out
    assert len(facts) == 13
    random.seed(0)
    theirs = []
    for i in range(len(facts)):
        sampled_idx = random.sample(list(range(i)) + list(range(i + 1, len(facts))), k=10)
        theirs.append(", ".join(f"{facts[j][0]} is located in {facts[j][1]}" for j in sampled_idx))
    query = prompts.queries(frame, RELATIONS, k=10, seed=0, draw="authors")
    few_shot = query[(query["measure"] == "specificity") & (query["method"] == "FP")].set_index("row")["query"]
    fact_of_row = [facts.index(fact) for fact in zip(located["sub_label"], located["fine_label"])]
    for row, fact in enumerate(fact_of_row):
        assert few_shot[row] == f"{theirs[fact]}, {facts[fact][0]} is located in [Y]."
    assert few_shot[5] == few_shot[2]  # a repeated fact is asked as its first row is
    numpy_draw = prompts.queries(frame, RELATIONS, k=10, seed=0)
    assert (numpy_draw.set_index(["row", "measure", "method"])["query"] != query.set_index(
        ["row", "measure", "method"])["query"]).any()  # fmt: skip


def test_queries_as_the_paper_writes_them():
    frame = triples(3)
    query = prompts.queries(frame, RELATIONS, k=2, seed=0)
    assert len(query) == len(frame) * 6
    first = query[query["row"] == 0].set_index(["measure", "method"])["query"]
    assert first[("specificity", "VP")] == "Town0 is located in [Y]."
    assert first[("specificity", "CP")] == "Town0 is located in [Y], which is located in [Y]."
    assert first[("naturalness", "VP")] == "[X] is located in [Y]."
    few_shot = first[("specificity", "FP")]
    # "Melbourne is located in Victoria, Guangzhou is located in Guangdong, Toronto is located in [MASK]."
    assert few_shot.endswith(", Town0 is located in [Y].")
    assert few_shot.count("is located in Region") == 2 and "Region0" not in few_shot
    assert prompts.masked_form(first[("naturalness", "CP")], "[MASK]") == (
        "[MASK] is located in [MASK], which is located in [MASK].",
        3,
        1,
    )
    # a causal model reads the text around a masked subject as the authors' GPT-2 connector: each
    # piece stripped and tokenized alone (the unknown token is special, never merged with them)
    assert prompts.causal_prefix(first[("naturalness", "VP")], "<unk>") == "<unk>is located in"
    assert prompts.causal_prefix(first[("naturalness", "VP")], "<unk>", "spaced") == "<unk> is located in"
    natural_few_shot = prompts.causal_prefix(first[("naturalness", "FP")], "<unk>")
    assert natural_few_shot.endswith("Region1,<unk>is located in") or natural_few_shot.endswith(
        "Region2,<unk>is located in"
    )
    assert prompts.causal_prefix(first[("naturalness", "FP")], "<unk>", "spaced").endswith(", <unk> is located in")
    assert (
        prompts.causal_continuation(first[("specificity", "CP")], "Tuscany", "Italy", "<unk>")
        == "Tuscany, which is located in Italy."
    )


def scores(fine, coarse, fine_in=None, coarse_in=None):
    n = len(fine)
    return pd.DataFrame(
        {
            "model": "m",
            "measure": "specificity",
            "method": "VP",
            "mode": "mask",
            "relation": ["P19"] * n,
            "fine_score": fine,
            "coarse_score": coarse,
            "fine_in_vocab": fine_in if fine_in is not None else [True] * n,
            "coarse_in_vocab": coarse_in if coarse_in is not None else [True] * n,
        }
    )


def test_p_r_ties_fail_and_missing_objects_are_left_out():
    frame = scores(
        [-1.0, -2.0, -3.0, -1.0, -1.0, np.nan],
        [-2.0, -2.0, -1.0, np.nan, np.nan, -1.0],
        fine_in=[True, True, True, True, True, False],
        coarse_in=[True, True, True, False, False, True],
    )
    row = metrics.p_r(frame).iloc[0]
    assert (row["p_r"], row["n"], row["left_out"]) == (pytest.approx(100 / 3), 3, 3)
    # the release's counting: a missing coarse object wins, a missing fine one drops the triple
    compat = metrics.p_r(frame, compat=True).iloc[0]
    assert (compat["p_r"], compat["n"], compat["left_out"]) == (pytest.approx(60.0), 5, 1)


def test_compat_leaves_relatedness_alone_and_unscored_rows_never_count():
    """The release's rule (a coarse object that is not a candidate wins) is about candidates, so
    it changes specificity and naturalness, not relatedness; a relatedness row without a score (a
    label the model could not embed) is left out in both countings."""
    fine_in, coarse_in = [True, True, True, True], [True, False, True, True]
    frame = pd.concat(
        [
            scores([-1.0, np.nan, -3.0, -1.0], [-2.0, np.nan, -1.0, -2.0], fine_in, coarse_in),
            scores([0.9, 0.8, 0.1, np.nan], [0.5, 0.2, 0.7, 0.3], fine_in, coarse_in).assign(
                measure="relatedness", method="-", mode="embedding"
            ),
        ]
    )
    plain = metrics.p_r(frame).set_index("measure").query("relation == 'P19'")
    compat = metrics.p_r(frame, compat=True).set_index("measure").query("relation == 'P19'")
    assert (plain.loc["specificity", "n"], plain.loc["specificity", "p_r"]) == (3, pytest.approx(200 / 3))
    assert (compat.loc["specificity", "n"], compat.loc["specificity", "p_r"]) == (4, pytest.approx(75.0))
    for table in (plain, compat):
        # relatedness: row 2 has no candidate coarse object, row 4 no score: two rows count, one wins
        assert (table.loc["relatedness", "n"], table.loc["relatedness", "left_out"]) == (2, 2)
        assert table.loc["relatedness", "p_r"] == pytest.approx(50.0)


def test_p_r_averages_relations():
    frame = pd.concat([scores([-1.0, -1.0], [-2.0, -0.5]), scores([-1.0], [-2.0]).assign(relation="P106")])
    table = metrics.p_r(frame).set_index("relation")["p_r"]
    assert table["P19"] == 50.0 and table["P106"] == 100.0 and table["Average"] == 75.0


def test_released_lines_are_validated_and_counted(tmp_path):
    good = {
        "sub_uri": "Q1",
        "sub_label": "Mankada",
        "obj_uri": "Q2",
        "obj_label": "Kerala",
        "obj_value": 1.5,
        "obj2_uri": "Q3",
        "obj2_label": "India",
        "obj2_value": 2.5,
        "predicate_id": "P361",
    }
    lines = [
        json.dumps(good),
        "{not json",
        json.dumps({k: v for k, v in good.items() if k != "obj2_uri"}),
        json.dumps({**good, "obj_value": "1.5"}),
        json.dumps({**good, "predicate_id": "P19"}),
        json.dumps({**good, "sub_uri": "Q9", "obj_value": 1}),
        json.dumps({**good, "sub_uri": "Q10", "obj2_uri": "Q2"}),  # the fine object is the coarse one
        json.dumps({**good, "sub_uri": "Q11", "obj_value": 2.5}),  # not closer than the coarse one
        json.dumps({**good, "sub_uri": "Q12", "obj_value": 3.0}),  # farther
        json.dumps({**good, "obj_label": "Goa"}),  # Q1 again
    ]
    (tmp_path / "P361.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")  # as the release names it
    frame, rejects = released.read_release(tmp_path, ["P361"])
    assert list(frame["sub_uri"]) == ["Q1", "Q9"]
    assert list(frame["fine_distance"]) == [1.5, 1.0] and frame["origin"].eq("released").all()
    assert dict(zip(rejects["reason"], rejects["n"])) == {
        "bad_type": 1,
        "invalid_json": 1,
        "missing_field": 1,
        "wrong_relation": 1,
        "same_object": 1,
        "fine_not_closer": 2,
        "duplicate_subject": 1,
    }
    with pytest.raises(KnowprobeError, match="no P19.jsonl"):
        released.read_release(tmp_path, ["P19"])


def test_a_seeded_sample_of_the_release_keeps_the_files_order():
    frame = pd.DataFrame(
        {
            "relation": ["P131"] * 40 + ["P361"] * 3,
            "sub_uri": [f"Q{i}" for i in range(40)] + ["Q100", "Q101", "Q102"],
            "sub_label": [f"S{i}" for i in range(43)],
        }
    )
    drawn = released.sample(frame, per_relation=10, seed=0)
    assert drawn["relation"].value_counts().to_dict() == {"P131": 10, "P361": 3}
    order = [int(uri[1:]) for uri in drawn["sub_uri"]]
    assert order == sorted(order)  # the file's order, which the authors' few-shot draw follows
    shuffled = released.sample(frame.sample(frac=1, random_state=1), per_relation=10, seed=0)
    assert set(shuffled["sub_uri"]) == set(drawn["sub_uri"])  # the same draw whatever the order
    assert set(released.sample(frame, 10, seed=1)["sub_uri"]) != set(drawn["sub_uri"])
    assert released.sample(frame, None, seed=0) is frame
