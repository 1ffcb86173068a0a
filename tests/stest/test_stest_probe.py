"""S-TEST's scores against plain one-example-at-a-time computations on tiny masked and causal
models: the mask's log-probabilities (vanilla, cascade's first mask, naturalness' object mask),
the next token and the whole sentence of a causal model, and relatedness' cosine."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from knowprobe.config import schema_defaults
from knowprobe.scoring import CausalLM, MaskedLM, ScoringSettings
from knowprobe.stest import metrics, probe, prompts
from knowprobe.vocab import candidate_table

SETTINGS = ScoringSettings(device="cpu", dtype="float32", batch_size=3, max_tokens=256, max_length=128)
RELATIONS = schema_defaults("stest")["relations"]
TRIPLES = pd.DataFrame(
    {
        "relation": ["P131"] * 5,
        "sub_uri": [f"Q{i}" for i in range(5)],
        "sub_label": ["Salzburg", "Florence", "Paris", "Rome", "New York"],
        "fine_label": ["Austria", "Italy", "France", "Italy", "city"],
        "coarse_label": ["Europe", "Europe", "Europe", "Asia", "Berlins"],  # "Berlins": no single token
    }
)


def mask_logprobs(model, tokenizer, text, which, ids):
    encoded = tokenizer(text, return_tensors="pt")["input_ids"]
    where = (encoded[0] == tokenizer.mask_token_id).nonzero()[which, 0]
    with torch.no_grad():
        logits = model(input_ids=encoded).logits[0, where]
    return torch.log_softmax(logits, -1)[ids].numpy()


def test_masked_scores_match_a_plain_forward(tiny_bert, wordpiece_tokenizer):
    scorer = MaskedLM(tiny_bert, wordpiece_tokenizer, SETTINGS)
    candidates = candidate_table(wordpiece_tokenizer, ["Austria", "Italy", "France", "Europe", "Asia", "city"])
    queries = prompts.queries(TRIPLES, RELATIONS, k=2, seed=0)
    scores = probe.score(scorer, "bert", TRIPLES, queries, candidates)
    ids = dict(zip(candidates["word"], candidates["token_id"]))
    mask = wordpiece_tokenizer.mask_token
    for _, triple in TRIPLES.iloc[:4].iterrows():
        targets = [ids[triple.fine_label], ids[triple.coarse_label]]
        rows = scores[(scores["sub_uri"] == triple.sub_uri) & (scores["mode"] == "mask")].set_index(
            ["measure", "method"]
        )
        expected = {
            ("specificity", "VP"): (f"{triple.sub_label} is located in {mask}.", 0),
            ("specificity", "CP"): (f"{triple.sub_label} is located in {mask}, which is located in {mask}.", 0),
            ("naturalness", "VP"): (f"{mask} is located in {mask}.", 1),
            ("naturalness", "CP"): (f"{mask} is located in {mask}, which is located in {mask}.", 1),
        }
        for key, (text, which) in expected.items():
            got = rows.loc[key, ["fine_score", "coarse_score"]].to_numpy(float)
            np.testing.assert_allclose(
                got, mask_logprobs(tiny_bert, wordpiece_tokenizer, text, which, targets), atol=1e-4
            )
        few_shot = rows.loc[("specificity", "FP"), "query"].replace("[Y]", mask)
        np.testing.assert_allclose(
            rows.loc[("specificity", "FP"), ["fine_score", "coarse_score"]].to_numpy(float),
            mask_logprobs(tiny_bert, wordpiece_tokenizer, few_shot, 0, targets),
            atol=1e-4,
        )
    # the triple whose coarse object is no candidate has no scores, and says so
    last = scores[scores["sub_uri"] == "Q4"]
    assert last.loc[last["measure"] != "relatedness", "fine_score"].isna().all()
    assert (~last["coarse_in_vocab"]).all() and last["fine_in_vocab"].all()


def test_relatedness_is_the_cosine_of_mean_pooled_embeddings(tiny_bert, wordpiece_tokenizer):
    scorer = MaskedLM(tiny_bert, wordpiece_tokenizer, SETTINGS)
    candidates = candidate_table(wordpiece_tokenizer, ["Austria", "Italy", "France", "Europe", "Asia", "city"])
    table = probe.relatedness(scorer, TRIPLES, probe.token_ids(TRIPLES["fine_label"], candidates), np.zeros(5))

    def embedding(phrase):
        encoded = wordpiece_tokenizer(phrase, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            states = tiny_bert.base_model(input_ids=encoded)[0][0]
        return states[1:-1].mean(0).numpy()  # [CLS] and [SEP] left out

    for i, triple in TRIPLES.iterrows():
        sub = embedding(triple.sub_label)
        for column, label in (("fine_score", triple.fine_label), ("coarse_score", triple.coarse_label)):
            obj = embedding(label)
            expected = sub @ obj / np.linalg.norm(sub) / np.linalg.norm(obj)
            assert table.loc[i, column] == pytest.approx(expected, abs=1e-5)


def test_relatedness_embeds_unknown_words_and_leaves_out_only_what_it_cannot_embed(
    tiny_bert, wordpiece_tokenizer, caplog
):
    """A label of words outside the vocabulary is [UNK]s, the phrase's own tokens (it used to
    have "no tokens to embed" and stop the model's whole probe); a label that is empty, or longer
    than the model takes, gives its triples no relatedness score, logged, and the rest go on."""
    assert wordpiece_tokenizer.tokenize("Wolfsburg Quedlinburg") == ["[UNK]", "[UNK]"]
    triples = pd.concat(
        [
            TRIPLES.iloc[:2],
            pd.DataFrame(
                {
                    "relation": ["P131"] * 3,
                    "sub_uri": ["Q10", "Q11", "Q12"],
                    "sub_label": ["Wolfsburg Quedlinburg", "", "Rome"],
                    "fine_label": ["Germany", "Italy", " ".join(["Italy"] * 200)],
                    "coarse_label": ["Europe"] * 3,
                }
            ),
        ],
        ignore_index=True,
    )
    scorer = MaskedLM(tiny_bert, wordpiece_tokenizer, SETTINGS)
    with caplog.at_level("WARNING"):
        table = probe.relatedness(scorer, triples, np.zeros(5, dtype=np.int64), np.zeros(5, dtype=np.int64))
    scored = table[["fine_score", "coarse_score"]].notna().all(axis=1).tolist()
    assert scored == [True, True, True, False, False]
    encoded = wordpiece_tokenizer("Wolfsburg Quedlinburg", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        unknown = tiny_bert.base_model(input_ids=encoded)[0][0][1:-1].mean(0).numpy()
    assert np.isfinite(unknown).all() and np.isfinite(table.loc[2, "fine_score"])
    assert "2 labels this model cannot embed" in caplog.text and "2 triples left out" in caplog.text


def test_causal_scores_match_a_plain_forward(tiny_causal_models):
    name, model, tokenizer = tiny_causal_models[0]  # GPT-2's layout
    scorer = CausalLM(model, tokenizer, SETTINGS)
    candidates = candidate_table(tokenizer, ["Austria", "Italy", "France", "Europe", "Asia", "city"])
    triples = TRIPLES.iloc[:4]
    queries = prompts.queries(triples, RELATIONS, k=2, seed=0)
    scores = probe.score(scorer, name, triples, queries, candidates)
    ids = dict(zip(candidates["word"], candidates["token_id"]))
    bos = [tokenizer.bos_token_id]

    def next_token(prefix, words):
        encoded = torch.tensor([bos + tokenizer(prefix, add_special_tokens=False)["input_ids"]])
        with torch.no_grad():
            logits = model(input_ids=encoded).logits[0, -1]
        return torch.log_softmax(logits, -1)[[ids[w] for w in words]].numpy()

    def sentence(prefix, rest):
        prefix_ids = bos + tokenizer(prefix, add_special_tokens=False)["input_ids"]
        full = bos + tokenizer(prefix + " " + rest, add_special_tokens=False)["input_ids"]
        assert full[: len(prefix_ids)] == prefix_ids
        with torch.no_grad():
            logprobs = torch.log_softmax(model(input_ids=torch.tensor([full])).logits[0], -1)
        return sum(logprobs[p - 1, full[p]].item() for p in range(len(prefix_ids), len(full)))

    for _, triple in triples.iterrows():
        rows = scores[scores["sub_uri"] == triple.sub_uri]
        vp = rows[(rows["measure"] == "specificity") & (rows["method"] == "VP")].set_index("mode")
        expected = next_token(f"{triple.sub_label} is located in", [triple.fine_label, triple.coarse_label])
        np.testing.assert_allclose(
            vp.loc["next_token", ["fine_score", "coarse_score"]].to_numpy(float), expected, atol=1e-4
        )
        cp = rows[(rows["measure"] == "specificity") & (rows["method"] == "CP")].set_index("mode")
        # left to right, the cascade's clause is unseen: CP equals VP
        np.testing.assert_allclose(cp.loc["next_token", ["fine_score"]].to_numpy(float), expected[:1], atol=1e-6)
        # the sentence mode reads it: each object in the first slot, the other in the clause
        prefix = f"{triple.sub_label} is located in"
        np.testing.assert_allclose(
            cp.loc["sentence", ["fine_score", "coarse_score"]].to_numpy(float),
            [
                sentence(prefix, f"{triple.fine_label}, which is located in {triple.coarse_label}."),
                sentence(prefix, f"{triple.coarse_label}, which is located in {triple.fine_label}."),
            ],
            atol=1e-3,
        )
        natural = rows[(rows["measure"] == "naturalness") & (rows["method"] == "VP")].set_index("mode")
        np.testing.assert_allclose(
            natural.loc["next_token", ["fine_score", "coarse_score"]].to_numpy(float),
            # the text after the masked subject tokenized alone, as the authors' GPT-2 connector does
            next_token(f"{tokenizer.unk_token}is located in", [triple.fine_label, triple.coarse_label]),
            atol=1e-4,
        )


def authors_gpt2_logprobs(model, tokenizer, sentence: str, ids: list[int]) -> np.ndarray:
    """The authors' GPT-2 connector (conftest.gpt2_connector_logprobs) with GPT-2's ids: the BOS id
    in front, the unknown id (GPT-2's end-of-text) in each mask."""
    from conftest import gpt2_connector_logprobs

    unk = tokenizer.convert_tokens_to_ids(tokenizer.unk_token)
    return gpt2_connector_logprobs(model, tokenizer, sentence, tokenizer.bos_token_id, unk, ids)


@pytest.mark.parametrize("spacing", ["authors", "spaced"])
def test_causal_naturalness_reads_the_subject_as_the_authors_gpt2_connector(tiny_causal_models, spacing):
    """Issue 44 item 7: the authors' connector tokenizes the text after the masked subject alone
    ("was", not " was") and a few-shot context without its final space; knowprobe read " was" and
    a space token of its own. ``spaced`` keeps that reading as an option."""
    from conftest import stest_next_token_scores

    name, model, tokenizer = tiny_causal_models[0]  # GPT-2's layout: unknown = BOS = <|endoftext|>
    scorer = CausalLM(model, tokenizer, SETTINGS)
    candidates = candidate_table(tokenizer, ["Austria", "Italy", "France", "Europe", "Asia", "city"])
    triples = TRIPLES.iloc[:4]
    queries = prompts.queries(triples, RELATIONS, k=2, seed=0)
    scores = probe.score(scorer, name, triples, queries, candidates, subject_spacing=spacing)
    ids = dict(zip(candidates["word"], candidates["token_id"]))
    natural = queries[queries["measure"] == "naturalness"]
    assert set(natural["method"]) == {"VP", "FP", "CP"}
    differ = 0
    for query in natural.itertuples():
        triple = triples.iloc[query.row]
        words = [ids[triple.fine_label], ids[triple.coarse_label]]
        sentence = query.query.replace("[X]", "[MASK]").replace("[Y]", "[MASK]")
        theirs = authors_gpt2_logprobs(model, tokenizer, sentence, words)
        # today's reading: the text before the slot as written, tokenized whole after the BOS
        written = query.query[: query.query.index("[Y]")].rstrip().replace("[X]", tokenizer.unk_token)
        whole = [tokenizer.bos_token_id] + tokenizer(written, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            spaced = torch.log_softmax(model(input_ids=torch.tensor([whole])).logits[0, -1], -1)[words].numpy()
        got = stest_next_token_scores(scores, triple.sub_uri, query.method)
        np.testing.assert_allclose(got, theirs if spacing == "authors" else spaced, atol=1e-4)
        differ += not np.allclose(theirs, spaced, atol=1e-3)
    assert differ == len(natural)  # the two readings differ on every query of this model


def test_causal_phrase_embeddings_pool_the_tokens_after_bos(tiny_causal_models):
    name, model, tokenizer = tiny_causal_models[0]
    scorer = CausalLM(model, tokenizer, SETTINGS)
    phrases = ["Paris", "New York", "the capital of France"]
    got = scorer.phrase_embeddings(phrases)
    for phrase, row in zip(phrases, got):
        ids = [tokenizer.bos_token_id] + tokenizer(phrase, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            states = model.base_model(input_ids=torch.tensor([ids]))[0][0]
        np.testing.assert_allclose(row, states[1:].mean(0).numpy(), atol=1e-5)


@pytest.mark.parametrize("kind", ["masked", "causal"])
def test_a_query_longer_than_the_model_takes_is_left_out_and_the_rest_scored(
    tiny_bert, wordpiece_tokenizer, tiny_causal_models, kind, caplog
):
    """A few-shot prompt of long labels past the model's 64 positions used to stop the model's whole
    probe ("longer than"); it gets no score, logged, and every other query is scored."""
    long_label = " ".join(["New York"] * 40)
    triples = pd.concat(
        [TRIPLES.iloc[:4], TRIPLES.iloc[:1].assign(sub_uri="Q9", sub_label=long_label)], ignore_index=True
    )
    if kind == "masked":
        scorer = MaskedLM(tiny_bert, wordpiece_tokenizer, SETTINGS)
    else:
        _, model, tokenizer = tiny_causal_models[0]
        scorer = CausalLM(model, tokenizer, SETTINGS)
    words = ["Austria", "Italy", "France", "Europe", "Asia", "city"]
    candidates = candidate_table(scorer.tokenizer, words)
    queries = prompts.queries(triples, RELATIONS, k=2, seed=0)
    with caplog.at_level("WARNING"):
        scores = probe.score(scorer, kind, triples, queries, candidates)
    asked = scores[scores["measure"] != "relatedness"]
    unscored = asked[asked["fine_score"].isna()]
    assert len(unscored) > 0 and set(unscored["sub_uri"]) <= {"Q9"} | set(triples["sub_uri"])
    assert asked.loc[asked["sub_uri"] == "Q9", "fine_score"].isna().any()  # its own queries are the long ones
    assert asked["fine_score"].notna().sum() > len(asked) / 2
    assert "queries are longer than this model takes" in caplog.text


def triples_with(label_column: str, label: str, n: int = 12) -> pd.DataFrame:
    """``n`` P131 triples of the test's words, the fourth (Q3) with ``label`` in ``label_column``."""
    cycle = TRIPLES.iloc[:4]
    triples = pd.concat([cycle] * (n // 4), ignore_index=True).assign(sub_uri=[f"Q{i}" for i in range(n)])
    triples.loc[3, label_column] = label
    return triples


def scorer_of(kind, tiny_bert, wordpiece_tokenizer, tiny_causal_models):
    if kind == "masked":
        return MaskedLM(tiny_bert, wordpiece_tokenizer, SETTINGS)
    _, model, tokenizer = tiny_causal_models[0]
    return CausalLM(model, tokenizer, SETTINGS)


@pytest.mark.parametrize(
    "kind, column, label, reason",
    [
        # issue 44 item 9: "... has 2 mask tokens after tokenization (needs 1; a label holding the mask
        # token?)" stopped the masked model's whole probe
        ("masked", "sub_label", "the [MASK] river", "special_token"),
        ("causal", "sub_label", "the <|endoftext|> river", "special_token"),
        # a slot marker in a label moved the scored slot into the label
        ("masked", "fine_label", "Italy [Y]", "placeholder"),
        ("causal", "sub_label", "the [Y] river", "placeholder"),
        # issue 44 item 9: a 300-word label took other subjects' few-shot queries out of p_r
        ("masked", "sub_label", " ".join(["city"] * 300), "too_long"),
        ("causal", "sub_label", " ".join(["city"] * 300), "too_long"),
    ],
)
def test_one_bad_triple_stays_one(
    tiny_bert, wordpiece_tokenizer, tiny_causal_models, kind, column, label, reason, caplog
):
    """A triple the model cannot be asked about is left out (counted by reason in the log) and
    shown in no other triple's few-shot prompt: every other query is scored."""
    scorer = scorer_of(kind, tiny_bert, wordpiece_tokenizer, tiny_causal_models)
    triples = triples_with(column, label)
    candidates = candidate_table(scorer.tokenizer, ["Austria", "Italy", "France", "Europe", "Asia", "city"])
    with caplog.at_level("WARNING"):
        queries, unusable = probe.model_queries(scorer, triples, RELATIONS, {"k": 3, "seed": 0, "draw": "numpy"})
        scores = probe.score(scorer, kind, triples, queries, candidates, unusable=unusable)
    assert list(unusable) == [""] * 3 + [reason] + [""] * 8
    assert f"1 triples this model cannot be asked about, left out of p_r and of every few-shot prompt ({reason} 1)" in (
        caplog.text
    )
    assert not queries["query"].str.contains(label, regex=False).loc[queries["row"] != 3].any()
    asked = scores[scores["measure"] != "relatedness"]
    assert asked.loc[asked["sub_uri"] == "Q3", "fine_score"].isna().all()
    others = asked[asked["sub_uri"] != "Q3"]
    assert others[["fine_score", "coarse_score"]].notna().all().all(), others[others["fine_score"].isna()]
    table = metrics.p_r(scores)
    fp = table[(table["method"] == "FP") & (table["relation"] == "P131")]
    assert (fp["n"] == 11).all() and (fp["left_out"] == 1).all()


@pytest.mark.parametrize("draw", ["numpy", "authors"])
def test_demonstrations_are_drawn_among_usable_triples_only(draw):
    relations = pd.Series(["P131"] * 12 + ["P19"] * 5)
    facts = pd.Series([f"s{i}\to{i}" for i in range(17)])
    everyone = prompts.demonstrations(relations, 3, 0, draw, facts)
    assert [list(d) for d in prompts.demonstrations(relations, 3, 0, draw, facts, np.ones(17, bool))] == [
        list(d) for d in everyone
    ]
    usable = np.ones(17, dtype=bool)
    usable[[3, 14]] = False
    drawn = prompts.demonstrations(relations, 3, 0, draw, facts, usable)
    for row, shown in enumerate(drawn):
        assert not set(shown) & {3, 14, row}
        assert len(shown) == (3 if usable[row] else 0)
