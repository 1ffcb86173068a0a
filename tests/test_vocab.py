import pandas as pd
import pytest

from knowprobe import vocab
from knowprobe.io import KnowprobeError

from conftest import SPECIALS, require_shared


def test_wordpiece_words_map_to_their_own_piece(wordpiece_tokenizer):
    ids = vocab.word_token_ids(wordpiece_tokenizer, ["Paris", "Berlin", "Parises", "Zzz", "New York"])
    tokens = [wordpiece_tokenizer.convert_ids_to_tokens(i) if i is not None else None for i in ids]
    assert tokens == ["Paris", "Berlin", None, None, None]


def test_byte_level_bpe_words_map_to_space_prefixed_tokens(bpe_tokenizer):
    ids = vocab.word_token_ids(bpe_tokenizer, ["Paris", "France", "Zzzq"])
    assert [bpe_tokenizer.convert_ids_to_tokens(i) for i in ids[:2]] == ["ĠParis", "ĠFrance"]
    assert ids[2] is None
    # the prompt "... is <mask> ." predicts the space-prefixed form, the one the candidates use
    prompt = bpe_tokenizer("Mozart was born in <mask> .")["input_ids"]
    assert bpe_tokenizer.convert_ids_to_tokens(prompt[prompt.index(bpe_tokenizer.mask_token_id) - 1]) == "Ġin"


def test_candidate_table_leaves_out_and_reports_words_of_several_tokens(wordpiece_tokenizer, caplog):
    with caplog.at_level("WARNING"):
        table = vocab.candidate_table(wordpiece_tokenizer, ["Rome", "Paris", "Zzz", "Parises"])
    assert table["word"].tolist() == sorted(["Rome", "Paris"], key=wordpiece_tokenizer.convert_tokens_to_ids)
    assert "2 of 4 candidate words" in caplog.text


def test_whole_vocabulary_mode_excludes_special_tokens(wordpiece_tokenizer):
    table = vocab.candidate_table(wordpiece_tokenizer, None)
    assert len(table) == len(wordpiece_tokenizer) - len(SPECIALS)
    assert not set(table["token_id"]) & set(wordpiece_tokenizer.all_special_ids)


def test_intersection_keeps_words_single_in_every_model(wordpiece_tokenizer, bpe_tokenizer):
    words = ["Paris", "Ulm", "capital", "Zzz"]
    both = vocab.candidate_words(words, "intersection", {"wp": wordpiece_tokenizer, "bpe": bpe_tokenizer})
    assert both == ["Paris", "capital"]  # "Ulm" is a WordPiece token but not a BPE one
    assert vocab.candidate_words(words, "common") == words
    with pytest.raises(KnowprobeError, match="vocab.mode"):
        vocab.candidate_words(words, "model")


def facts_frame(rows, subjects=None):
    return pd.DataFrame(
        [
            dict(relation=r, fact_id=str(i), sub_label=s, obj_label=o, judgments_yes=y, judgments_no=n)
            for i, ((r, o, y, n), s) in enumerate(zip(rows, subjects or ["s"] * len(rows)))
        ]
    )


def test_filter_keeps_one_fact_per_subject_and_object_label_as_lama_evaluates(wordpiece_tokenizer):
    """Distinct subjects sharing a label ("BMW 3 Series -> BMW" four times in LAMA's P176) are one
    fact: the first in file order; a repeat that the filter drops anyway keeps that reason."""
    rows = [("P1", "Paris", 0, 0), ("P1", "Rome", 0, 0), ("P1", "Paris", 0, 0), ("P2", "Paris", 0, 0)]
    rows += [("P1", "Zzz", 0, 0), ("P1", "Zzz", 0, 0), ("P1", "Paris", 0, 0)]
    subjects = ["Dante", "Dante", "Dante", "Dante", "Dante", "Dante", "Mozart"]
    candidates = vocab.candidate_table(wordpiece_tokenizer, ["Paris", "Rome"])["token_id"]
    kept, dropped = vocab.filter_facts(facts_frame(rows, subjects), wordpiece_tokenizer, candidates)
    assert kept["fact_id"].tolist() == ["0", "1", "3", "6"]
    assert dropped[["relation", "reason", "n"]].values.tolist() == [["P1", "duplicate", 1], ["P1", "not_one_token", 2]]


def test_filter_keeps_single_token_candidates_and_counts_every_drop(wordpiece_tokenizer):
    facts = facts_frame(
        [
            ("P1", "Paris", 0, 0),
            ("P1", "Rome", 0, 0),
            ("P1", "New York", 0, 0),
            ("P1", "Salzburg", 0, 0),
            ("P2", "Vienna", 3, 2),
            ("P2", "Berlin", 1, 4),
            ("P2", "Zzz", 0, 0),
        ]
    )
    candidates = vocab.candidate_table(wordpiece_tokenizer, ["Paris", "Rome", "Vienna", "Berlin"])["token_id"]
    kept, dropped = vocab.filter_facts(facts, wordpiece_tokenizer, candidates)
    assert kept["obj_label"].tolist() == ["Paris", "Rome", "Vienna"]
    assert kept["obj_token_id"].tolist() == wordpiece_tokenizer.convert_tokens_to_ids(["Paris", "Rome", "Vienna"])
    assert dropped[["relation", "reason", "n"]].values.tolist() == [
        ["P1", "not_candidate", 1],
        ["P1", "not_one_token", 1],
        ["P2", "judgments", 1],
        ["P2", "not_one_token", 1],
    ]
    assert int(dropped["n"].sum()) + len(kept) == len(facts)


def test_filter_drops_objects_that_do_not_decode_to_themselves():
    from transformers import BertTokenizerFast

    # an uncased model: "Paris" is one token, but it reads back as "paris"
    uncased = BertTokenizerFast(vocab={t: i for i, t in enumerate(SPECIALS + ["paris", "rome"])}, do_lower_case=True)
    assert len(uncased) == len(SPECIALS) + 2
    kept, dropped = vocab.filter_facts(
        facts_frame([("P1", "Paris", 0, 0), ("P1", "rome", 0, 0)]),
        uncased,
        vocab.candidate_table(uncased, None)["token_id"],
    )
    assert kept["obj_label"].tolist() == ["rome"]
    assert dropped[["reason", "n"]].values.tolist() == [["not_itself", 1]]


def test_read_words_keeps_symbols_and_rejects_duplicates(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("#\n%\nParis\n\n", encoding="utf-8")
    assert vocab.read_words(path) == ["#", "%", "Paris"]
    path.write_text("Paris\nRome\nParis\n", encoding="utf-8")
    with pytest.raises(KnowprobeError, match=r"vocab.txt:3: word 'Paris' is listed twice"):
        vocab.read_words(path)


def test_real_common_vocabulary_has_lamas_size():
    words = vocab.read_words(require_shared("lama", "common_vocab_cased.txt"))
    assert len(words) == 21018 and words[0] == "#"
