"""Facts whose answers may be several words and tokens (issue 41), and their objects' token counts.

LAMA's T-REx facts are those whose object is one token of BERT's vocabulary; X-FACTR (Jiang et
al. 2020) probes answers of several tokens. This set is built from the Wikidata stage's tables
by T-REx-train's machinery (``trex_train.build_from``) with the one-word and single-token filters
off: per LAMA T-REx relation, the (subject, object) pairs of its claims, each once, both ends
labelled, no subject of the relation's LAMA test facts, a seeded draw of at most ``per_relation``
(``multitoken_facts`` in docs/contracts.md), each end with its aliases; and per probed model the
number of tokens of each object's label (``object_tokens``).
"""

from __future__ import annotations

import pandas as pd

from ..config import schema_defaults
from ..contracts import MULTITOKEN_FACTS, OBJECT_TOKENS
from ..vocab import word_initial_ids
from . import trex_train

_DEFAULTS = schema_defaults("lpaqa", "multitoken")
# T-REx-train's build with its one-word filter off, LAMA's test subjects (not only its test pairs)
# left out, and the aliases kept; ``build_from`` and ``build`` pass the same
FILTERS = {"one_word": False, "test_subjects": True, "aliases": True}


def relations_of(test_facts: pd.DataFrame) -> list[str]:
    """The test set's relations in the order of their numbers (P17 before P101)."""
    return sorted(set(test_facts["relation"]), key=lambda r: int(r.lstrip("P")))


def build_from(
    claims,
    entities,
    test_facts: pd.DataFrame,
    per_relation: int = _DEFAULTS["per_relation"],
    seed: int = _DEFAULTS["seed"],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The multi-token facts (``multitoken_facts``) of the test set's relations and the drop counts
    per relation and reason, from the claims and entities datasets (``pyarrow.dataset``, streamed as
    T-REx-train's are).

    Filters as T-REx-train's, less the one-word and single-token ones: ``duplicate``,
    ``no_label``, then ``subject_in_test_set``: no fact whose subject is a subject of *the same
    relation* in the LAMA test set (``test_facts``), then ``not_sampled``. Per relation, because
    what must not overlap is the question a test fact asks (the subject in the relation's [X]
    slot): a test subject's other objects of the relation (a country's other official languages in
    P37) would be near-copies of a test fact; the same subject under another relation asks
    another question, and dropping it everywhere would thin relations whose subjects are shared
    (people in P19, P20, P27, P106). X-FACTR's released code
    (scripts/trex_multi_entity.py at c1938ec) builds its facts from T-REx's aligned triples and
    shows no exclusion of LAMA's test facts, so there is no choice of theirs to follow."""
    facts, dropped = trex_train.build_from(
        claims,
        entities,
        test_facts,
        relations_of(test_facts),
        None,  # no candidate vocabulary: the single-token filter is off
        per_relation,
        seed,
        **FILTERS,
    )
    return facts[MULTITOKEN_FACTS.columns], dropped


def build(
    claims: pd.DataFrame,
    entities: pd.DataFrame,
    test_facts: pd.DataFrame,
    per_relation: int = _DEFAULTS["per_relation"],
    seed: int = _DEFAULTS["seed"],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``build_from`` on tables in memory."""
    facts, dropped = trex_train.build(
        claims,
        entities,
        test_facts,
        relations_of(test_facts),
        None,  # no candidate vocabulary: the single-token filter is off
        per_relation,
        seed,
        **FILTERS,
    )
    return facts[MULTITOKEN_FACTS.columns], dropped


def token_counts(tokenizer, labels: list[str]) -> list[int]:
    """The number of tokens of each label as it sits in a statement after a space ("[X] was born
    in Paris"): ``" " + label`` without special tokens, the rule knowprobe.vocab maps candidates
    by. The space selects the word-initial pieces of byte-level BPE (RoBERTa, GPT-2: ``ĠParis``)
    and SentencePiece (``▁Paris``); WordPiece (BERT) strips it, so there it is the label alone. An
    object at the very start of a template would have no space before it; LAMA's templates put
    [Y] after text."""
    unique = sorted(set(labels))
    counts = dict(zip(unique, map(len, word_initial_ids(tokenizer, unique))))
    return [counts[label] for label in labels]


def object_tokens(facts: pd.DataFrame, tokenizers: dict) -> pd.DataFrame:
    """The ``object_tokens`` table: per fact and model (``tokenizers``: model name to tokenizer),
    the token count of the object's label (``token_counts``); a long table, so that its contract
    does not change with the configured models."""
    labels = facts["obj_label"].tolist()
    frames = [
        pd.DataFrame(
            {
                "relation": facts["relation"].to_numpy(),
                "fact_id": facts["fact_id"].to_numpy(),
                "model": model,
                "obj_tokens": token_counts(tokenizer, labels),
            },
            columns=OBJECT_TOKENS.columns,
        )
        for model, tokenizer in tokenizers.items()
    ]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=OBJECT_TOKENS.columns)
