"""Issue 54: a statement a model cannot take (an answer longer than it takes, an answer without a
token of its own under ``conditional``, the masked model's own mask token in a subject) is left
out of that model's BEAR scores and counted by reason; the job goes on and every other statement
keeps the score it has without them. Tiny models (64 positions)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from knowprobe.bear import dataset, probe, tables
from knowprobe.scoring import CausalLM, MaskedLM

LONG = " ".join(["Paris"] * 400)  # 400 words: more tokens than the tiny models' 64 positions
ZERO_WIDTH = "\u200b"
TEMPLATES = ["[X] is located in [Y].", "The capital of [X] is [Y] .", "[Y] has the city [X]."]
ANSWERS = ["France", "Germany", "Asia", LONG, ZERO_WIDTH]
FACTS = [("Paris", "France"), ("Berlin", "Germany"), ("[MASK] town", "Asia"), ("Longtown", LONG)]


def write_set(root, answers, facts):
    ids = [f"Q{i}" for i in range(len(answers))]
    metadata = {"P1": {"templates": TEMPLATES, "answer_space_labels": answers, "answer_space_ids": ids}}
    (root / "metadata_relations.json").write_text(json.dumps(metadata))
    with open(root / "P1.jsonl", "w") as out:
        for k, (subject, answer) in enumerate(facts):
            i = answers.index(answer)
            line = {"sub_id": f"S{k}", "sub_label": subject, "obj_id": ids[i], "obj_label": answer}
            out.write(json.dumps(line) + "\n")
    return root


@pytest.mark.parametrize("name, conditional", [("bert", True), ("bert", False), ("gpt2", True), ("gpt2", False)])
def test_statements_a_model_cannot_take_are_left_out_and_counted(
    tmp_path, tiny_bert, wordpiece_tokenizer, tiny_causal_models, name, conditional
):
    if name == "bert":
        scorer = MaskedLM(tiny_bert, wordpiece_tokenizer)
        assert wordpiece_tokenizer.mask_token == "[MASK]"
    else:
        _, model, tokenizer = tiny_causal_models[0]
        scorer = CausalLM(model, tokenizer)
    relations, instances, _ = dataset.read_dataset(write_set(tmp_path, ANSWERS, FACTS))
    statements = probe.statements(relations, instances)
    kept, left_out = probe.leave_out(scorer, statements, instances, conditional)
    counts = dict(zip(left_out["reason"], left_out["n"]))
    templates, masked = len(TEMPLATES), name == "bert"
    subjects = [s for s, _ in FACTS if not (masked and "[MASK]" in s)]
    expected = {"too_long": templates * len(subjects)}
    if masked:
        expected["mask_token"] = templates * len(ANSWERS)
        if conditional:  # the zero-width space is no token of the wordpiece tokenizer's
            expected["no_tokens"] = templates * len(subjects)
    expected["gold_left_out"] = templates * (2 if masked else 1)  # Longtown's, and [MASK] town's
    assert counts == expected
    assert all(len(example) < 400 for example in left_out["example"])  # quoted, never the whole text
    scores = probe.score(scorer, name, kept.reset_index(drop=True), conditional=conditional)
    # every other statement keeps its score: the clean set's statements scored alone
    clean = [(s, a) for s, a in FACTS if s in subjects and a != LONG]
    (tmp_path / "clean").mkdir()
    clean_relations, clean_instances, _ = dataset.read_dataset(write_set(tmp_path / "clean", ANSWERS[:3], clean))
    clean_statements = probe.statements(clean_relations, clean_instances)
    alone = probe.score(scorer, name, clean_statements, conditional=conditional)
    mine = dict(zip(kept["text"], scores["score"]))
    theirs = dict(zip(clean_statements["text"], alone["score"]))
    assert set(theirs) <= set(mine)
    np.testing.assert_allclose([mine[t] for t in theirs], list(theirs.values()), rtol=0, atol=1e-4)
    line = probe.left_out_line(left_out)
    assert "statements longer than the model takes" in line and "\n" not in line
    note = tables.left_out_note(pd.DataFrame([{"model": name, "left_out": left_out.to_dict("records")}]))
    assert note.startswith(". Left out per model") and f"{expected['too_long']} statements longer" in note
