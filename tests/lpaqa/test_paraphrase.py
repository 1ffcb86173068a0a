"""Back-translation paraphrasing: placeholders, B² candidates, scores, de-duplication, seeds,
with tiny randomly initialised FSMT and Marian models built here and a scripted translator."""

from __future__ import annotations

import json
import string

import pandas as pd
import pytest
import torch

from knowprobe.lpaqa import demo_translator, paraphrase
from knowprobe.lpaqa.paraphrase import Hypothesis, ParaphraseSettings
from knowprobe.prompts import template_problem

from conftest import ROOT

SEEDS = pd.DataFrame({"relation": ["P19", "P36"], "template": ["[X] was born in [Y] .", "The capital of [X] is [Y] ."]})


@pytest.fixture(scope="module")
def tiny_fsmt(tmp_path_factory):
    """A 1-layer FSMT (the WMT'19 architecture) with a character-level BPE vocabulary."""
    from transformers import FSMTConfig, FSMTForConditionalGeneration, FSMTTokenizer

    path = tmp_path_factory.mktemp("fsmt")
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for char in string.ascii_letters + string.digits + ".,[]":
        vocab.setdefault(char, len(vocab))
        vocab.setdefault(char + "</w>", len(vocab))
    for name in ("vocab-src.json", "vocab-tgt.json"):
        (path / name).write_text(json.dumps(vocab))
    (path / "merges.txt").write_text("")
    tokenizer = FSMTTokenizer(
        langs=["en", "de"],
        src_vocab_file=str(path / "vocab-src.json"),
        tgt_vocab_file=str(path / "vocab-tgt.json"),
        merges_file=str(path / "merges.txt"),
    )
    assert tokenizer.src_vocab_size == tokenizer.tgt_vocab_size == len(vocab)
    assert "<unk>" not in tokenizer.tokenize("X was born in Y.")
    torch.manual_seed(0)
    config = FSMTConfig(
        langs=["en", "de"],
        src_vocab_size=len(vocab),
        tgt_vocab_size=len(vocab),
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=128,
        pad_token_id=1,
        eos_token_id=2,
        bos_token_id=0,
        decoder_start_token_id=2,
    )
    FSMTForConditionalGeneration(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def tiny_marian(tmp_path_factory):
    """A 2-layer Marian (the opus-mt architecture) with a SentencePiece vocabulary trained here."""
    path = tmp_path_factory.mktemp("marian")
    texts = ["X was born in Y.", "The capital of X is Y.", "X ist die Hauptstadt von Y.", "X wurde in Y geboren."]
    tokenizer = demo_translator.make_tokenizer(texts * 5, path)
    # every word of the texts is in the vocabulary: nothing becomes <unk>
    assert tokenizer.unk_token_id not in tokenizer("X was born in Y.")["input_ids"]
    assert len(tokenizer) == len(json.loads((path / "vocab.json").read_text()))
    model = demo_translator.make_model(tokenizer, demo_translator.TinyTranslatorSettings(d_model=32, heads=2, seed=0))
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


class ScriptedTranslator:
    """A backend whose hypotheses are given: each input text maps to its list of hypotheses."""

    def __init__(self, table: dict[str, list[Hypothesis]]):
        self.table = table
        self.calls = []

    def translate(self, texts, beams, settings):
        self.calls.append(list(texts))
        return [self.table[text][:beams] for text in texts]


# --- placeholders ------------------------------------------------------------------------------


def test_to_source_puts_stand_ins_in_the_slots_and_joins_punctuation():
    settings = ParaphraseSettings()
    assert paraphrase.to_source("[X] was born in [Y] .", settings) == "X was born in Y."
    assert paraphrase.to_source("[Y] , the capital of [X] .", settings) == "Y, the capital of X."
    custom = ParaphraseSettings(subject_stand_in="Alice", object_stand_in="Bob")
    assert paraphrase.to_source("[X] likes [Y] .", custom) == "Alice likes Bob."


def test_to_source_refuses_a_template_that_already_holds_a_stand_in_word():
    settings = ParaphraseSettings()
    assert paraphrase.to_source("[X] plays Y position as [Y] .", settings) is None
    assert paraphrase.to_source("[X] works for XYZ in [Y] .", settings) is not None  # only whole words count


@pytest.mark.parametrize(
    "text, expected",
    [
        ("X was born in Y.", "[X] was born in [Y] ."),
        ("Y is where X was born!", "[Y] is where [X] was born !"),
        ("[X] was born in [ Y ].", "[X] was born in [Y] ."),  # brackets the model kept or spaced
        ("(X) comes from Y", "[X] comes from [Y]"),
        ("X's birthplace is Y.", "[X]'s birthplace is [Y] ."),
    ],
)
def test_to_template_restores_the_slots(text, expected):
    assert paraphrase.to_template(text, ParaphraseSettings()) == (expected, None)


@pytest.mark.parametrize(
    "text, problem",
    [
        ("Mozart was born in Y.", "subject stand-in missing"),
        ("X was born in Salzburg.", "object stand-in missing"),
        ("X and X were born in Y.", "subject stand-in repeated"),
        ("X was born in Y, Y.", "object stand-in repeated"),
        ("Xaver was born in Yorkshire.", "subject stand-in missing"),  # inside a word is not the stand-in
        ("X Y.", "nothing but the slots"),
    ],
)
def test_to_template_rejects_broken_placeholders(text, problem):
    assert paraphrase.to_template(text, ParaphraseSettings()) == (None, problem)


def test_stand_ins_must_be_two_different_words():
    with pytest.raises(paraphrase.KnowprobeError, match="must differ"):
        paraphrase.check_stand_ins(ParaphraseSettings(subject_stand_in="Z", object_stand_in="Z"))
    with pytest.raises(paraphrase.KnowprobeError, match="subject_stand_in"):
        paraphrase.check_stand_ins(ParaphraseSettings(subject_stand_in=" X"))


# --- round trip, scores, selection (scripted backend: every number is known) -----------------


def nullable(column):
    return [value if isinstance(value, str) else None for value in column]


def scripted_pair():
    forward = ScriptedTranslator(
        {
            "X was born in Y.": [
                Hypothesis("X wurde in Y geboren.", -1.0, 2),
                Hypothesis("X ist in Y geboren.", -2.0, 4),
            ],
        }
    )
    backward = ScriptedTranslator(
        {
            "X wurde in Y geboren.": [
                Hypothesis("X was born in Y.", -0.5, 5),
                Hypothesis("X was born in Salzburg.", -1.5, 5),
            ],
            "X ist in Y geboren.": [Hypothesis("X is born in Y.", -0.25, 5), Hypothesis("X was born in Y.", -0.75, 5)],
        }
    )
    return forward, backward


def test_round_trip_gives_b_squared_candidates_scored_forward_plus_backward():
    forward, backward = scripted_pair()
    candidates = paraphrase.round_trip(SEEDS.iloc[:1], forward, backward, ParaphraseSettings(beams=2))
    assert len(candidates) == 4  # B² with B=2
    assert forward.calls == [["X was born in Y."]]
    assert backward.calls == [["X wurde in Y geboren.", "X ist in Y geboren."]]
    assert candidates["score"].tolist() == [-1.5, -2.5, -2.25, -2.75]  # -1-0.5, -1-1.5, -2-0.25, -2-0.75
    assert nullable(candidates["paraphrase"]) == [
        "[X] was born in [Y] .",
        None,
        "[X] is born in [Y] .",
        "[X] was born in [Y] .",
    ]
    assert nullable(candidates["problem"]) == [None, "object stand-in missing", None, None]


def test_length_normalisation_divides_each_direction_by_its_tokens():
    forward, backward = scripted_pair()
    candidates = paraphrase.round_trip(
        SEEDS.iloc[:1], forward, backward, ParaphraseSettings(beams=2, length_normalize=True)
    )
    # -1/2 - 0.5/5, -1/2 - 1.5/5, -2/4 - 0.25/5, -2/4 - 0.75/5
    assert candidates["score"].tolist() == pytest.approx([-0.6, -0.8, -0.55, -0.65])
    assert candidates["forward_logprob"].tolist() == [-1.0, -1.0, -2.0, -2.0]  # the raw sums stay


def test_select_deduplicates_keeping_the_best_score_and_ranks_the_top_t():
    forward, backward = scripted_pair()
    candidates = paraphrase.round_trip(SEEDS.iloc[:1], forward, backward, ParaphraseSettings(beams=2))
    kept, lost = paraphrase.select(candidates, top=40)
    assert kept["paraphrase"].tolist() == ["[X] was born in [Y] .", "[X] is born in [Y] ."]
    assert kept["score"].tolist() == [-1.5, -2.25]  # the duplicate's -2.75 is dropped, not summed
    assert kept["rank"].tolist() == [0, 1]
    assert kept["german"].tolist() == ["X wurde in Y geboren.", "X ist in Y geboren."]
    assert lost == {"object stand-in missing": 1, "duplicate": 1, "beyond top T": 0}
    top1, lost1 = paraphrase.select(candidates, top=1)
    assert top1["paraphrase"].tolist() == ["[X] was born in [Y] ."] and lost1["beyond top T"] == 1


def test_statistics_report_the_placeholder_loss_rate():
    forward, backward = scripted_pair()
    candidates = paraphrase.round_trip(SEEDS.iloc[:1], forward, backward, ParaphraseSettings(beams=2))
    kept, lost = paraphrase.select(candidates, top=40)
    stats = paraphrase.statistics("manual", SEEDS.iloc[:1], candidates, kept, lost).iloc[0]
    assert (stats["candidates"], stats["placeholder_broken"], stats["kept"]) == (4, 1, 2)
    assert stats["placeholder_loss_rate"] == 0.25


def test_seeds_holding_a_stand_in_are_skipped_and_the_rest_paraphrased():
    forward, backward = scripted_pair()
    seeds = pd.DataFrame({"relation": ["P1", "P19"], "template": ["[X] plays Y for [Y] .", "[X] was born in [Y] ."]})
    candidates = paraphrase.round_trip(seeds, forward, backward, ParaphraseSettings(beams=2))
    assert set(candidates["relation"]) == {"P19"}
    kept, lost = paraphrase.select(candidates, 40)
    stats = paraphrase.statistics("manual", seeds, candidates, kept, lost).iloc[0]
    assert (stats["seeds"], stats["seeds_paraphrased"]) == (2, 1)


def test_prompt_set_layout():
    forward, backward = scripted_pair()
    kept, _ = paraphrase.select(
        paraphrase.round_trip(SEEDS.iloc[:1], forward, backward, ParaphraseSettings(beams=2)), 40
    )
    prompts = paraphrase.as_prompt_set(kept, "manual")
    assert list(prompts.columns) == ["relation", "template", "source", "rank", "score"]
    assert set(prompts["source"]) == {"paraphrase-of-manual"}


# --- Mine+Para's seeds -----------------------------------------------------------------------


def test_mined_seed_is_the_best_on_train_with_frequency_breaking_ties_and_a_fallback():
    mined = pd.DataFrame(
        {
            "relation": ["P19", "P19", "P19", "P36", "P36", "P37"],
            "template": [
                "[X] born [Y] .",
                "[X] was born in [Y] .",
                "[X] native of [Y] .",
                "[Y] capital [X] .",
                "capital of [X] is [Y] .",
                "[X] speaks [Y] .",
            ],
            "source": ["mid", "mid", "dep", "mid", "dep", "mid"],
            "rank": [0, 1, 2, 0, 1, 0],
            "score": [9.0, 5, 3, 8, 2, 4],
        }
    )
    metrics = pd.DataFrame(
        {
            "relation": ["P19", "P19", "P19", "P36", "P36"],
            "template": [
                "[X] born [Y] .",
                "[X] was born in [Y] .",
                "[X] native of [Y] .",
                "[Y] capital [X] .",
                "capital of [X] is [Y] .",
            ],
            "micro": [0.2, 0.5, 0.5, 0.1, 0.3],
        }
    )
    seeds, fallbacks = paraphrase.select_mined_seeds(mined, metrics)
    assert seeds["template"].tolist() == ["[X] was born in [Y] .", "capital of [X] is [Y] .", "[X] speaks [Y] ."]
    assert fallbacks == 1  # P37 has no train facts: its most frequent prompt


# --- real seq2seq models: tiny FSMT and Marian --------------------------------------------------


def stepwise_logprob(model, source_ids, target_ids, start_id):
    """log P(target | source) one decoder step at a time, with the full prefix each step
    (use_cache=False: FSMT's forward masks the future only then)."""
    total, prefix = 0.0, [start_id]
    with torch.no_grad():
        for token in target_ids:
            logits = model(input_ids=source_ids, decoder_input_ids=torch.tensor([prefix]), use_cache=False).logits[
                0, -1
            ]
            total += torch.log_softmax(logits.float(), dim=-1)[token].item()
            prefix.append(token)
    return total


@pytest.mark.parametrize("fixture", ["tiny_fsmt", "tiny_marian"])
def test_hf_translator_returns_b_hypotheses_with_their_exact_log_probabilities(fixture, request):
    translator = paraphrase.HFTranslator(request.getfixturevalue(fixture), device="cpu")
    settings = ParaphraseSettings(beams=3, max_new_tokens=12)
    texts = ["X was born in Y.", "The capital of X is Y."]
    hypotheses = translator.translate(texts, 3, settings)
    assert [len(h) for h in hypotheses] == [3, 3]
    model, tokenizer = translator.model, translator.tokenizer
    start = model.generation_config.decoder_start_token_id
    eos = model.generation_config.eos_token_id
    for text, hyps in zip(texts, hypotheses):
        assert [h.logprob for h in hyps] == sorted((h.logprob for h in hyps), reverse=True)
        source = tokenizer([text], return_tensors="pt")["input_ids"]
        for hyp in hyps:
            assert hyp.tokens == len(hyp.token_ids) > 0
            # the scored tokens end at the first eos, or at the length limit
            assert hyp.token_ids[-1] == eos or hyp.tokens == settings.max_new_tokens
            assert eos not in hyp.token_ids[:-1]
            expected = stepwise_logprob(model, source, list(hyp.token_ids), start)
            assert hyp.logprob == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize("fixture", ["tiny_fsmt", "tiny_marian"])
def test_round_trip_with_real_models_is_b_squared_and_deterministic(fixture, request):
    path = request.getfixturevalue(fixture)
    settings = ParaphraseSettings(beams=3, max_new_tokens=10, batch_size=1)
    forward, backward = paraphrase.HFTranslator(path, device="cpu"), paraphrase.HFTranslator(path, device="cpu")
    first = paraphrase.round_trip(SEEDS, forward, backward, settings)
    assert len(first) == len(SEEDS) * 3 * 3
    assert first.groupby("relation").size().tolist() == [9, 9]
    assert first["score"].tolist() == pytest.approx((first["forward_score"] + first["backward_score"]).tolist())
    # random weights rarely keep a stand-in: every candidate has a template or a reason, never both
    assert (first["paraphrase"].isna() == first["problem"].notna()).all()
    # batching differently and loading again give the same candidates
    again = paraphrase.round_trip(
        SEEDS,
        paraphrase.HFTranslator(path, device="cpu"),
        backward,
        ParaphraseSettings(beams=3, max_new_tokens=10, batch_size=8),
    )
    pd.testing.assert_frame_equal(
        first.drop(columns=["forward_logprob", "backward_logprob", "forward_score", "backward_score", "score"]),
        again.drop(columns=["forward_logprob", "backward_logprob", "forward_score", "backward_score", "score"]),
    )
    assert again["score"].tolist() == pytest.approx(first["score"].tolist(), abs=1e-4)


def test_demo_translator_learns_to_copy_so_placeholders_survive(tmp_path):
    texts = ["X was born in Y.", "The capital of X is Y.", "X is located in Y.", "Y is the capital of X."]
    summary = demo_translator.train(
        texts,
        tmp_path / "copy",
        demo_translator.TinyTranslatorSettings(
            d_model=32, heads=2, steps=300, batch_size=16, learning_rate=5e-3, noise=0.1
        ),
    )
    assert summary["final_loss"] < summary["first_loss"] / 3
    translator = paraphrase.HFTranslator(tmp_path / "copy", device="cpu")
    candidates = paraphrase.round_trip(SEEDS, translator, translator, ParaphraseSettings(beams=3))
    kept, _ = paraphrase.select(candidates, 40)
    # each seed gets paraphrases with both slots back (a random model's round trips lose them)
    assert set(kept["relation"]) == {"P19", "P36"}
    assert all(template_problem(t) is None for t in kept["paraphrase"])


def test_fairseq_backend_reads_fairseqs_hypotheses(monkeypatch):
    """fairseq itself cannot be installed here (Python 3.8 only); its hub interface is stood in for
    by an object with the same methods and return shapes, to check knowprobe's side of it."""

    class HubInterface:
        def __init__(self):
            self.generated = []

        def eval(self):
            return self

        def encode(self, text):
            return torch.tensor([len(text), 2])

        def generate(self, tokens, beam, **kwargs):
            self.generated.append((len(tokens), beam, kwargs))
            # per sentence, its hypotheses in fairseq's order (by length-penalised score)
            hyps = [
                ([10, 2], [-1.0, -0.5]),
                ([11, 11, 2], [-0.25, -0.25, -0.25]),
                ([12, 12, 12, 2], [-1.0, -1.0, -0.5, -0.5]),
            ]
            return [
                [{"tokens": torch.tensor(t), "positional_scores": torch.tensor(p), "score": 0.0} for t, p in hyps]
                for _ in tokens
            ]

        def decode(self, tokens):
            return f"X hyp{tokens[0].item()} Y."

    hub = HubInterface()
    loaded = []
    monkeypatch.setattr(torch.hub, "load", lambda *args, **kwargs: loaded.append((args, kwargs)) or hub)
    translator = paraphrase.FairseqTranslator("transformer.wmt19.en-de.single_model", device="cpu")
    # issue 44, item 6: fairseq's hub code at the tag of the release envs/fairseq.yaml installs,
    # not its default branch ("pytorch/fairseq")
    assert loaded[0][0] == ("facebookresearch/fairseq:v0.12.2", "transformer.wmt19.en-de.single_model")
    assert "fairseq==0.12.2" in (ROOT / "envs/fairseq.yaml").read_text()
    assert loaded[0][1]["tokenizer"] == "moses" and loaded[0][1]["bpe"] == "fastbpe"
    out = translator.translate(["X was born in Y.", "X died in Y."], 3, ParaphraseSettings(batch_size=8))
    assert hub.generated == [(2, 3, {"max_len_b": 64})]
    # log-probabilities are the sums of the positional scores (eos included), best first
    assert [(h.text, h.logprob, h.tokens) for h in out[0]] == [
        ("X hyp11 Y.", -0.75, 3),
        ("X hyp10 Y.", -1.5, 2),
        ("X hyp12 Y.", -3.0, 4),
    ]
    assert out[1] == out[0]
