"""LM-aware prompt refinement (LPAQA section 6.1, Table 14): mask-predict hill climbing.

Starting from a prompt, each of its tokens in turn, left to right, is masked and replaced by the
token the model finds most probable there on average over the relation's facts, with subject and
object filled in: argmax_w (1/|R|) sum_(x,y) P(w | x, t without token i, y). Passes repeat until
one changes nothing (or ``max_rounds``). The refined prompts form a prompt set of their own.

Tokens are the model's own (a word may be several pieces). A replacement is drawn from the tokens
that are words on their own (a token that decodes to a string which tokenizes back to it), so
that the refined prompt is text the probe tokenizes into the same tokens; special tokens never.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..prompts import OBJECT, SUBJECT
from ..scoring.masked import first_char

log = logging.getLogger(__name__)


def word_tokens(tokenizer) -> np.ndarray:
    """Boolean [vocab]: tokens that are a word on their own (decoded, they tokenize back to
    themselves, with or without a space before) and not special."""
    ids = np.arange(len(tokenizer))
    texts = [tokenizer.decode([int(i)]).strip() for i in ids]
    alone = tokenizer(texts, add_special_tokens=False)["input_ids"]
    spaced = tokenizer([" " + t for t in texts], add_special_tokens=False)["input_ids"]
    allowed = np.array([bool(t) and ([i] == a or [i] == b) for i, t, a, b in zip(ids, texts, alone, spaced)])
    allowed[list(tokenizer.all_special_ids)] = False
    return allowed


def filled_spans(template: str, subject: str, obj: str) -> tuple[str, list[tuple[int, int]]]:
    """The template with subject and object filled in, and the character spans of both, in the
    order the slots appear."""
    spans, text = [], ""
    for piece in template.replace(SUBJECT, "\0X\0").replace(OBJECT, "\0Y\0").split("\0"):
        value = {"X": subject, "Y": obj}.get(piece, piece)
        if piece in ("X", "Y"):
            spans.append((len(text), len(text) + len(value)))
        text += value
    return text, spans


@dataclass
class Filled:
    """One fact's tokenized filled prompt, where the template's own tokens sit in it, and for each
    of them how many slots come before it (0: before the first slot, 1: between, 2: after)."""

    ids: list[int]
    template_positions: list[int]
    slots_before: list[int]


def tokenize(tokenizer, template: str, subject: str, obj: str) -> Filled:
    text, spans = filled_spans(template, subject.strip(), obj.strip())
    encoding = tokenizer(text, add_special_tokens=True, return_offsets_mapping=True)
    special = tokenizer.get_special_tokens_mask(encoding["input_ids"], already_has_special_tokens=True)
    positions, slots_before = [], []
    for p, (start, stop) in enumerate(encoding["offset_mapping"]):
        begin = first_char(text, start, stop)
        if not special[p] and not any(a <= begin < b for a, b in spans):
            positions.append(p)
            slots_before.append(sum(b <= begin for _, b in spans))
    return Filled(list(encoding["input_ids"]), positions, slots_before)


def render(tokenizer, template: str, reference: Filled, tokens: list[int]) -> str:
    """The template with its own tokens replaced by ``tokens``, as text with [X] and [Y]."""
    slots = sorted([SUBJECT, OBJECT], key=template.index)
    pieces = []
    for group in range(3):
        ids = [token for token, before in zip(tokens, reference.slots_before) if before == group]
        text = tokenizer.decode(ids, clean_up_tokenization_spaces=False).strip() if ids else ""
        pieces += ([text] if text else []) + ([slots[group]] if group < 2 else [])
    return " ".join(pieces)


@dataclass
class Refinement:
    template: str
    refined: str
    rounds: int
    changed_tokens: int
    facts: int
    skipped_facts: int


def refine_prompt(scorer, template: str, facts: pd.DataFrame, allowed: np.ndarray, max_rounds: int) -> Refinement:
    """Mask-predict refinement of one prompt on a relation's facts (``sub_label``, ``obj_label``).
    Facts whose filled prompt tokenizes the template differently from the first fact's (a subject
    that merges with a neighbouring token) are left out and counted."""
    tokenizer = scorer.tokenizer
    if facts.empty:
        return Refinement(template, template, 0, 0, 0, 0)
    filled = [tokenize(tokenizer, template, s, o) for s, o in zip(facts["sub_label"], facts["obj_label"])]
    reference = [filled[0].ids[p] for p in filled[0].template_positions]
    kept = [f for f in filled if [f.ids[p] for p in f.template_positions] == reference]
    tokens, changed, rounds = list(reference), 0, 0
    while rounds < max_rounds:
        rounds += 1
        changed_this_round = 0
        for i in range(len(tokens)):
            sequences = []
            for fact in kept:
                ids = list(fact.ids)
                for j, position in enumerate(fact.template_positions):
                    ids[position] = tokens[j]
                ids[fact.template_positions[i]] = tokenizer.mask_token_id
                sequences.append(ids)
            positions = np.array([fact.template_positions[i] for fact in kept])
            mean = scorer.mean_probabilities(sequences, positions)[: len(allowed)]
            best = int(np.argmax(np.where(allowed[: len(mean)], mean, -1.0)))
            if best != tokens[i]:
                tokens[i] = best
                changed_this_round += 1
        changed += changed_this_round
        if not changed_this_round:
            break
    refined = render(tokenizer, template, filled[0], tokens)
    return Refinement(template, refined, rounds, changed, len(kept), len(filled) - len(kept))
