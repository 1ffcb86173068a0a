"""Candidate vocabularies and LAMA's fact filter.

P@1 ranks the candidates at the mask. By default the candidates are LAMA's common cased
vocabulary (21,018 words), mapped per model to the id of the word as a *word-initial*
token: for WordPiece that is the plain piece (``Paris``), for byte-level BPE (RoBERTa,
GPT-2) the space-prefixed one (``ĠParis``), for SentencePiece the ``▁``-prefixed one.
A word counts only if it is one token that decodes back to exactly itself — the test
LAMA applies to objects.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from .io import KnowprobeError

log = logging.getLogger(__name__)

VOCAB_MODES = ("common", "model", "intersection")
DROP_REASONS = {
    "not_one_token": "object is not one token of the model (several pieces, or unknown)",
    "not_itself": "object's token does not decode back to the object label",
    "not_candidate": "object is not in the candidate vocabulary",
    "judgments": "Google-RE: more 'no' than 'yes' human judgments",
    "duplicate": "the same (subject label, object label) is already a fact of the relation (LAMA keeps the first)",
}


def read_words(path: str | Path) -> list[str]:
    """One word per line; every non-empty line is a word (LAMA's file starts with '#')."""
    path = Path(path)
    if not path.is_file():
        raise KnowprobeError(f"{path}: file not found")
    words, seen = [], set()
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        word = line.rstrip("\r")
        if not word.strip():
            continue
        if word != word.strip():
            raise KnowprobeError(f"{path}:{number}: word {word!r} has surrounding whitespace")
        if word in seen:
            raise KnowprobeError(f"{path}:{number}: word {word!r} is listed twice")
        seen.add(word)
        words.append(word)
    if not words:
        raise KnowprobeError(f"{path}: no words")
    return words


def word_initial_ids(tokenizer, words: list[str]) -> list[list[int]]:
    """Each word's token ids as it sits after a space in a sentence: ``" " + word`` without special
    tokens. The leading space selects the word-initial form in byte-level BPE and SentencePiece
    vocabularies; WordPiece tokenizers strip it."""
    if not words:
        return []
    return tokenizer([" " + word for word in words], add_special_tokens=False)["input_ids"]


def _word_tokens(tokenizer, words: list[str]) -> list[int | str]:
    """For each word, its single word-initial token id, or why it has none: ``not_one_token``
    (several pieces, or unknown) or ``not_itself`` (one token that decodes to something else),
    from ``word_initial_ids``."""
    encoded = word_initial_ids(tokenizer, words)
    special = set(tokenizer.all_special_ids)
    result: list[int | str] = []
    for word, ids in zip(words, encoded):
        if len(ids) != 1 or ids[0] in special:
            result.append("not_one_token")
        elif tokenizer.decode(ids).strip() != word:
            result.append("not_itself")
        else:
            result.append(ids[0])
    return result


def word_token_ids(tokenizer, words: list[str]) -> list[int | None]:
    """For each word, its single word-initial token id, or None if it has none."""
    return [token if isinstance(token, int) else None for token in _word_tokens(tokenizer, words)]


def candidate_words(common_words: list[str], mode: str, tokenizers: dict | None = None) -> list[str]:
    """The word list for modes ``common`` and ``intersection`` (all models' single tokens)."""
    if mode == "common":
        return list(common_words)
    if mode == "intersection":
        if not tokenizers:
            raise KnowprobeError("vocab.mode 'intersection' needs at least one model")
        keep = [True] * len(common_words)
        for name, tokenizer in tokenizers.items():
            ids = word_token_ids(tokenizer, common_words)
            missing = sum(token is None for token in ids)
            log.info("%s: %d of %d common words are not single tokens", name, missing, len(common_words))
            keep = [k and token is not None for k, token in zip(keep, ids)]
        return [word for word, k in zip(common_words, keep) if k]
    raise KnowprobeError(f"vocab.mode: {mode!r} has no word list (choose one of {', '.join(VOCAB_MODES)})")


def candidate_table(tokenizer, words: list[str] | None) -> pd.DataFrame:
    """Columns ``word, token_id``: the model's candidates, sorted by token id.

    ``words=None`` selects the model's whole vocabulary less its special tokens.
    """
    if words is None:
        special = set(tokenizer.all_special_ids)
        token_ids = [i for i in range(len(tokenizer)) if i not in special]
        words = [tokenizer.decode([i]).strip() for i in token_ids]
    else:
        ids = word_token_ids(tokenizer, words)
        missing = [word for word, token in zip(words, ids) if token is None]
        if missing:
            log.warning(
                "%d of %d candidate words are not single tokens of this model and are left out (first: %s)",
                len(missing),
                len(words),
                ", ".join(missing[:10]),
            )
        pairs = [(word, token) for word, token in zip(words, ids) if token is not None]
        if not pairs:
            raise KnowprobeError("no candidate word is a single token of this model")
        words, token_ids = map(list, zip(*pairs))
    frame = pd.DataFrame({"word": words, "token_id": pd.array(token_ids, dtype="int64")})
    frame = frame.drop_duplicates("token_id").sort_values("token_id", kind="stable").reset_index(drop=True)
    return frame


def filter_facts(
    facts: pd.DataFrame, tokenizer, candidate_ids, single_token: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """LAMA's filter. Returns the kept facts (with ``obj_token_id``) and the drop counts.

    A fact is kept when its object label is one token of the model that decodes back to the
    label, that token is a candidate, and (Google-RE) the 'yes' judgments are not outnumbered.
    Of the facts kept, as LAMA evaluates them, only the first in file order of each (relation,
    subject label, object label) stays: distinct subjects that share a label would otherwise be
    probed, and counted, twice. The drop table has ``relation, reason, description, n`` with the
    first failing reason. ``single_token=False`` (scores that rank whole statements, whose objects
    may be several tokens): only the judgments and duplicates are filtered, and ``obj_token_id``
    is -1.
    """
    labels = sorted(facts["obj_label"].unique())
    token_of = dict(zip(labels, _word_tokens(tokenizer, labels) if single_token else [-1] * len(labels)))
    candidates = set(int(i) for i in candidate_ids)

    def reason(row) -> str | None:
        token = token_of[row.obj_label]
        if not isinstance(token, int):
            return token
        if single_token and token not in candidates:
            return "not_candidate"
        if row.judgments_no > row.judgments_yes:
            return "judgments"
        return None

    reasons = pd.Series([reason(row) for row in facts.itertuples()], index=facts.index, dtype=object)
    passed = reasons.isna()
    repeated = facts[passed].duplicated(["relation", "sub_label", "obj_label"], keep="first")
    reasons[repeated[repeated].index] = "duplicate"
    facts = facts.assign(drop_reason=reasons)
    kept = facts[facts["drop_reason"].isna()].drop(columns="drop_reason").copy()
    kept["obj_token_id"] = kept["obj_label"].map(token_of).astype("int64")
    dropped = (
        facts[facts["drop_reason"].notna()]
        .groupby(["relation", "drop_reason"], sort=True)
        .size()
        .rename("n")
        .reset_index()
        .rename(columns={"drop_reason": "reason"})
    )
    dropped["description"] = dropped["reason"].map(DROP_REASONS)
    dropped = dropped[["relation", "reason", "description", "n"]]
    log.info(
        "kept %d of %d facts; dropped %d (%s)",
        len(kept),
        len(facts),
        int(dropped["n"].sum()),
        ", ".join(f"{r}: {n}" for r, n in dropped.groupby("reason")["n"].sum().items()) or "none",
    )
    return kept.reset_index(drop=True), dropped
