"""LAMA-UHN (Poerner et al., 2019): T-REx without the facts whose object can be guessed from the
subject's name, by the two filters of LAMA's ``scripts/create_lama_uhn.py``, applied in its order:

- **string match**: the object's label occurs in the subject's (both lowercased, by default);
- **person name**: for the relations of persons (place of birth and death, citizenship, languages),
  each whitespace-separated word of the subject's label is put into "[X] is a common name in the
  following [Y] : [MASK] ." (Y a city, country or language), and the fact is easy when the object's
  label is among the model's ``top_k`` tokens at the mask, over its whole vocabulary (LAMA's script
  uses bert-base-cased and 3).
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

log = logging.getLogger(__name__)

TEMPLATE = "{name} is a common name in the following {noun} : {mask} ."
REASONS = {
    "string_match": "the object's label occurs in the subject's",
    "person_name": "the object is among the model's top guesses for a name in the subject",
}


def string_match(facts: pd.DataFrame, lowercase: bool = True) -> np.ndarray:
    """Whether each fact's object label occurs in its subject label."""
    subjects, objects = facts["sub_label"], facts["obj_label"]
    if lowercase:
        subjects, objects = subjects.str.lower(), objects.str.lower()
    return np.array([obj in sub for sub, obj in zip(subjects, objects)], dtype=bool)


def person_name(facts: pd.DataFrame, scorer, place_nouns: dict[str, str], top_k: int) -> np.ndarray:
    """Whether each fact's object is among the top guesses for a name in its subject (for the
    relations of ``place_nouns``; others are never easy by this filter)."""
    tokenizer = scorer.tokenizer
    lowercase = bool(getattr(tokenizer, "do_lower_case", False))
    texts, owners = [], []
    for row, fact in enumerate(facts.itertuples(index=False)):
        if fact.relation in place_nouns:
            label = fact.sub_label.lower() if lowercase else fact.sub_label
            for name in label.split():
                texts.append(TEMPLATE.format(name=name, noun=place_nouns[fact.relation], mask=tokenizer.mask_token))
                owners.append(row)
    easy = np.zeros(len(facts), dtype=bool)
    if not texts:
        return easy
    vocabulary = np.arange(len(tokenizer))
    scores = scorer.candidate_logprobs(texts, vocabulary, top_k=top_k)
    objects = facts["obj_label"].str.lower() if lowercase else facts["obj_label"]
    for owner, ids in zip(owners, scores.topk_ids):
        if objects.iloc[owner] in tokenizer.convert_ids_to_tokens([int(i) for i in ids]):
            easy[owner] = True
    return easy


def filter_uhn(facts: pd.DataFrame, scorer, place_nouns: dict[str, str], top_k: int, lowercase: bool = True):
    """T-REx-UHN's facts and the drop counts (``relation, reason, description, n``)."""
    matched = string_match(facts, lowercase)
    named = np.zeros(len(facts), dtype=bool)
    named[~matched] = person_name(facts[~matched], scorer, place_nouns, top_k)
    reasons = pd.Series(np.where(matched, "string_match", np.where(named, "person_name", "")), index=facts.index)
    dropped = (
        facts.assign(reason=reasons)[reasons != ""]
        .groupby(["relation", "reason"], sort=True)
        .size()
        .rename("n")
        .reset_index()
    )
    dropped["description"] = dropped["reason"].map(REASONS)
    log.info(
        "kept %d of %d facts; string match %d, person name %d",
        (reasons == "").sum(),
        len(facts),
        matched.sum(),
        named.sum(),
    )
    return facts[(reasons == "").to_numpy()].reset_index(drop=True), dropped[["relation", "reason", "description", "n"]]
