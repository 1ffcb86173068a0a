"""COMPS's scores through the shared scorers equal minicons' conditional_score with a sum
reduction (the library the authors scored with), on tiny models built here: causal LMs as the
authors called it (no start token), masked LMs with both PLL variants, on pairs in the release's
layout at COMPS's real lengths."""

import copy

import numpy as np
import pandas as pd
import pytest
import torch

from knowprobe.comps import builder, probe
from knowprobe.scoring import CausalLM, MaskedLM
from knowprobe.scoring.recheck import even_sample

from conftest import byte_level_tokenizer

minicons = pytest.importorskip("minicons.scorer", reason="minicons is a test dependency (pip install -e '.[test]')")

STIMULI = pd.DataFrame(
    {
        "subset": ["base", "base", "wugs", "wugs_dist_before"],
        "id": [0, 1, 0, 0],
        "prefix_acceptable": [
            "Paris",
            "Paris",
            "A wug is Paris . Therefore , a wug",
            "A dax is Berlin . A wug is Paris . Therefore , a wug",
        ],
        "prefix_unacceptable": [
            "Berlin",
            "Mozart",
            "A wug is Berlin . Therefore , a wug",
            "A dax is Berlin . A wug is Paris . Therefore , a dax",
        ],
        "property_phrase": [
            "is the capital of France .",
            "is the capital of France .",
            "was born in Salzburg .",
            "was born in Berlins .",
        ],
    }
)


@pytest.fixture(scope="module")
def released_layout_pairs() -> pd.DataFrame:
    """Every subset's pairs as the builder writes them (the release's layout: "a guinea pig" /
    "is a mammal kept as a pet."; WUGS-DIST prefixes of about 20 words), over a few concepts."""
    concepts = pd.DataFrame(
        {
            "concept": ["robin", "penguin", "emu", "guinea_pig", "apple", "chest_of_drawers"],
            "article": ["a robin", "a penguin", "an emu", "a guinea_pig", "an apple", "a chest_of_drawers"],
            "is_animal": [True, True, True, True, False, False],
        }
    )
    properties = ["can fly", "has feathers", "lays eggs", "is eaten in summer pudding", "is a mammal kept as a pet"]
    rng = np.random.default_rng(0)
    rows = [
        (prop, positive, negative, "random", np.nan)
        for prop in properties
        for positive in concepts["concept"]
        for negative in rng.choice(concepts["concept"], 2, replace=False)
        if negative != positive
    ]
    columns = ["property", "acceptable_concept", "unacceptable_concept", "negative_sample_type", "similarity"]
    pairs = pd.DataFrame(rows, columns=columns)
    return pd.concat([STIMULI, builder.stimuli(pairs, concepts, ["wug", "dax", "blicket", "fep"])], ignore_index=True)


@pytest.fixture(scope="module")
def long_gpt2():
    """A tiny GPT-2 with positions enough for the byte-level tokenizer's long WUGS-DIST texts."""
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = byte_level_tokenizer(
        ["<|endoftext|>"], bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<|endoftext|>"
    )
    torch.manual_seed(11)
    config = GPT2Config(vocab_size=len(tokenizer), n_embd=32, n_layer=2, n_head=2, n_positions=256)
    return GPT2LMHeadModel(config).eval(), tokenizer


def for_minicons(tokenizer):
    """A copy of the tokenizer for minicons (which adds a pad token to causal ones), with the
    ``batch_encode_plus`` that minicons' masked scorer calls: transformers 5 removed it; calling
    the tokenizer on a list is what it did."""
    tokenizer = copy.deepcopy(tokenizer)
    tokenizer.batch_encode_plus = lambda *args, **kwargs: tokenizer(*args, **kwargs)
    return tokenizer


def minicons_scores(scorer, stimuli, **kw):
    total = lambda x: x.sum(0).item()  # noqa: E731 (minicons takes a reduction callable)
    acceptable = scorer.conditional_score(
        list(stimuli["prefix_acceptable"]), list(stimuli["property_phrase"]), reduction=total, **kw
    )
    unacceptable = scorer.conditional_score(
        list(stimuli["prefix_unacceptable"]), list(stimuli["property_phrase"]), reduction=total, **kw
    )
    return np.array(acceptable), np.array(unacceptable)


@pytest.mark.parametrize("within_word_l2r", [False, True])
def test_masked_scores_equal_minicons(tiny_bert, wordpiece_tokenizer, within_word_l2r, released_layout_pairs):
    """At COMPS's real lengths (up to 25 tokens here, words outside the vocabulary as [UNK], which
    both sides score). Measured: at most 4e-6 apart on this model."""
    stimuli = released_layout_pairs
    ours = probe.score(MaskedLM(tiny_bert, wordpiece_tokenizer), "bert", stimuli, within_word_l2r=within_word_l2r)
    metric = "within_word_l2r" if within_word_l2r else "original"
    theirs = minicons.MaskedLMScorer(tiny_bert, "cpu", tokenizer=for_minicons(wordpiece_tokenizer), PLL_metric=metric)
    acceptable, unacceptable = minicons_scores(theirs, stimuli)
    assert "[UNK]" in wordpiece_tokenizer.tokenize(stimuli["prefix_acceptable"].iloc[-1])
    np.testing.assert_allclose(ours["acceptable_score"], acceptable, atol=1e-4)
    np.testing.assert_allclose(ours["unacceptable_score"], unacceptable, atol=1e-4)
    assert np.isfinite(ours[["acceptable_score", "unacceptable_score"]].to_numpy()).all()


def test_within_word_masking_changes_a_split_word_only(tiny_bert, wordpiece_tokenizer):
    assert wordpiece_tokenizer.tokenize("Berlins") == ["Berlin", "##s"]  # the last phrase's split word
    scorer = MaskedLM(tiny_bert, wordpiece_tokenizer)
    plain = probe.score(scorer, "bert", STIMULI)
    l2r = probe.score(scorer, "bert", STIMULI, within_word_l2r=True)
    np.testing.assert_array_equal(plain["acceptable_score"][:3], l2r["acceptable_score"][:3])
    # a random tiny model barely reads the masked piece, but it does read it
    assert plain["acceptable_score"][3] != l2r["acceptable_score"][3]


@pytest.mark.parametrize("start_token", [False, True])
def test_causal_scores_equal_minicons(long_gpt2, released_layout_pairs, start_token):
    """start_token=False (COMPS's default) is the authors' call, minicons' bos_token=False; the
    option start_token=True is minicons' bos_token=True."""
    model, tokenizer = long_gpt2
    stimuli = released_layout_pairs
    ours = probe.score(CausalLM(model, tokenizer, start_token=start_token), "gpt2", stimuli)
    theirs = minicons.IncrementalLMScorer(model, "cpu", tokenizer=for_minicons(tokenizer))
    acceptable, unacceptable = minicons_scores(theirs, stimuli, bos_token=start_token)
    np.testing.assert_allclose(ours["acceptable_score"], acceptable, atol=1e-4)
    np.testing.assert_allclose(ours["unacceptable_score"], unacceptable, atol=1e-4)


def test_the_start_token_changes_the_scores(long_gpt2, released_layout_pairs):
    model, tokenizer = long_gpt2
    without = probe.score(CausalLM(model, tokenizer, start_token=False), "gpt2", released_layout_pairs)
    with_bos = probe.score(CausalLM(model, tokenizer, start_token=True), "gpt2", released_layout_pairs)
    assert (np.abs(without["acceptable_score"] - with_bos["acceptable_score"]) > 1e-3).mean() > 0.5


def test_comps_scores_causal_models_without_a_start_token():
    """The authors' call is the default of the config (the schema) and of the rule that loads scorers."""
    from knowprobe.config import schema_defaults

    assert schema_defaults("comps", "scoring")["start_token"] is False


def test_comps_follows_scoring_dtype_with_a_float32_recheck_by_default():
    """COMPS's precision overrides scoring.dtype where set (null by default: float32 on the CPU,
    half precision on a GPU), and below float32 the pairs near a tie are rescored."""
    from knowprobe.config import schema_defaults

    section = {"device": "auto", "dtype": "auto", "batch_size": 128}
    defaults = schema_defaults("comps", "scoring")
    assert defaults["dtype"] is None and schema_defaults("comps", "scoring", "recheck") == {"sample": 0.02, "factor": 4}
    assert probe.scoring_settings(section, "float32").dtype == "float32"
    assert probe.scoring_settings(section, None).dtype == "auto"
    assert probe.scoring_settings(section, "float32").batch_size == 128


def noisy_scores(pairs: int, noise: float, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """float32 scores of ``pairs`` pairs, many near a tie, and the same moved by at most ``noise``."""
    rng = np.random.default_rng(seed)
    exact = pd.DataFrame(
        {
            "model": "m",
            "subset": "base",
            "id": np.arange(pairs),
            "acceptable_score": -10 + rng.normal(0, 0.05, pairs),
            "unacceptable_score": -10 + rng.normal(0, 0.05, pairs),
        }
    )
    low = exact.copy()
    for column in ("acceptable_score", "unacceptable_score"):
        low[column] += rng.uniform(-noise, noise, pairs)
    return exact, low


def test_recheck_restores_float32_decisions_rescoring_the_sample_and_the_near_pairs():
    exact, low = noisy_scores(20_000, noise=0.01)
    right = exact["acceptable_score"] > exact["unacceptable_score"]
    assert ((low["acceptable_score"] > low["unacceptable_score"]) != right).sum() > 100  # half precision moved them
    asked = []

    def rescore(rows):
        asked.append(rows)
        return exact.iloc[rows]

    checked, report = probe.recheck(low, rescore, share=0.02, factor=4)
    assert ((checked["acceptable_score"] > checked["unacceptable_score"]) == right).all()
    assert report.sample == 400 and 0.015 < report.error <= 0.02 and report.bound == 4 * report.error
    margin = (low["acceptable_score"] - low["unacceptable_score"]).abs()
    assert report.near == ((margin <= report.bound).sum() - (margin.iloc[asked[0]] <= report.bound).sum())
    assert (
        report.changed_sample + report.changed_near
        == ((low["acceptable_score"] > low["unacceptable_score"]) != right).sum()
    )
    assert not report.bound_too_tight and "float32 recheck: 400 of 20,000 pairs sampled" in report.describe()
    rescored = np.concatenate(asked)
    assert len(set(rescored)) == len(rescored)  # no pair rescored twice
    kept = np.setdiff1d(np.arange(len(low)), rescored)
    assert checked.iloc[kept].equals(low.iloc[kept])  # the rest keep their half-precision scores
    assert checked.iloc[rescored].reset_index(drop=True).equals(exact.iloc[rescored].reset_index(drop=True))


def test_a_bound_too_tight_for_the_near_pairs_is_flagged():
    exact, low = noisy_scores(2_000, noise=0.001)
    # a few pairs outside the sample moved far more than any sampled pair
    sample = set(even_sample(2_000, 0.02).tolist())
    outliers = [i for i in range(2_000) if i not in sample][:5]
    low.loc[outliers, "acceptable_score"] = exact.loc[outliers, "unacceptable_score"] + 0.001
    exact.loc[outliers, "acceptable_score"] = exact.loc[outliers, "unacceptable_score"] - 0.05
    _, report = probe.recheck(low, lambda rows: exact.iloc[rows], share=0.02, factor=4)
    assert report.changed_near >= 5 and report.bound_too_tight


def test_each_distinct_text_is_scored_once_and_spread_back(tiny_bert, wordpiece_tokenizer):
    calls = []

    class Counting(MaskedLM):
        def conditional_logprob(self, prefixes, continuations, separator=" ", within_word_l2r=False):
            calls.append(len(prefixes))
            return super().conditional_logprob(prefixes, continuations, separator, within_word_l2r)

    scores = probe.score(Counting(tiny_bert, wordpiece_tokenizer), "bert", STIMULI)
    assert calls == [7]  # 8 texts, "Paris is the capital of France ." twice
    assert scores["acceptable_score"][0] == scores["acceptable_score"][1]
