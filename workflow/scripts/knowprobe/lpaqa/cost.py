"""What each LPAQA score costs a run, counted before it runs (a dry run prints it): the inputs a
model reads and the tokens it runs, from the facts and prompt sets the probe will pair.

- ``mask``: one input per distinct (prompt, subject), the template filled with the mask token.
- ``next_token``: one input per distinct prefix (the prompt's text before [Y], the subject filled),
  after the start token.
- ``statement``: one statement per distinct (prompt, subject, candidate of C_r): a (prompt,
  subject, C_r) that several facts or parts ask for is scored once (``probe.probe_statements``;
  ``run_cost`` counts it for the first part only). A causal model runs each
  distinct statement's tokens once with the prefix the candidates share (the text before [Y])
  placed once per (prompt, subject): ``tokens after prefix sharing`` counts
  start + prefix once per pair and each candidate's answer and right context; a masked model runs
  one copy of a statement per token (its pseudo-log-likelihood), so its ``tokens`` are
  those copies' tokens. Tokens are counted piecewise (the prefix, " " + the candidate, the right
  context, each tokenized alone), which can differ by a token where a tokenizer merges across
  the boundary.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..prompts import OBJECT, SUBJECT
from ..scoring.decoding import METHODS as OPEN  # open decoding at masks


@dataclass(frozen=True)
class Cost:
    pairs: int  # (fact, prompt) pairs
    inputs: int  # distinct inputs (mask, next_token) or statements (statement)
    tokens: int | None  # tokens run without sharing (masked statement: the PLL copies' tokens)
    shared_tokens: int | None  # causal statement: tokens after prefix sharing

    def line(self, score: str, kind: str) -> str:
        what = "statements" if score == "statement" else "inputs (distinct within each prompt set and split)"
        text = f"{self.pairs:,} (fact, prompt) pairs, {self.inputs:,} {what}"
        if self.tokens is None:
            return text + " (tokens: the model's tokenizer is not there yet)"
        if score == "statement" and kind == "masked":
            return text + f", {self.tokens:,} tokens in their PLL copies (one masked copy per token)"
        text += f", {self.tokens:,} tokens"
        if self.shared_tokens is not None:
            text += (
                f", {self.shared_tokens:,} after prefix sharing ({self.tokens / max(1, self.shared_tokens):.1f}x fewer)"
            )
        return text


def pairs_of(facts: pd.DataFrame, prompts: pd.DataFrame) -> pd.DataFrame:
    return facts[["relation", "sub_label", "obj_label"]].merge(prompts[["relation", "template"]], on="relation")


def cost(
    facts: pd.DataFrame,
    prompts: pd.DataFrame,
    score: str,
    kind: str,
    tokenizer=None,
    answer_spaces: dict[str, list[str]] | None = None,
    cache: dict[str, int] | None = None,
    scored: dict | None = None,
    objects: dict[str, list[str]] | None = None,
) -> Cost:
    """One part's cost (the facts of a split, a prompt set) under ``score``; without a tokenizer
    only the pairs and inputs are counted. ``cache``: texts' token counts already known (parts
    share most of their texts); ``scored``: the statement score's (prompt, subject, C_r) inputs
    earlier parts scored, which this part does not score again (``run_cost`` passes one on)."""
    pairs = pairs_of(facts, prompts)
    cache = {} if cache is None else cache

    def lengths(texts, special: bool = False) -> dict[str, int]:
        """Each text's token count (with the tokenizer's special tokens where ``special``)."""
        texts = list(dict.fromkeys(texts))
        keyed = [(special, text) for text in texts]
        new = [text for key, text in zip(keyed, texts) if key not in cache]
        if new:
            for text, ids in zip(new, tokenizer(new, add_special_tokens=special)["input_ids"]):
                cache[(special, text)] = len(ids)
        return {text: cache[key] for key, text in zip(keyed, texts)}

    if pairs.empty:
        counted = tokenizer is not None
        return Cost(0, 0, 0 if counted else None, 0 if counted and score == "statement" and kind == "causal" else None)
    if score != "statement":
        from .probe import next_token_prefix

        pieces = zip(pairs["template"], pairs["sub_label"])
        if score == "mask":
            texts = list(dict.fromkeys((t, s.strip()) for t, s in pieces))
        else:
            texts = list(dict.fromkeys(next_token_prefix(t, s) for t, s in pieces))
        tokens = None
        if tokenizer is not None:
            if score == "mask":
                filled = [t.replace(SUBJECT, s).replace(OBJECT, tokenizer.mask_token) for t, s in texts]
                tokens = int(sum(lengths(filled, special=True).values()))
            else:
                tokens = int(sum(1 + n for n in lengths(texts).values()))  # the start token and the prefix
        return Cost(len(pairs), len(texts), tokens, None)
    from .probe import candidate_sets

    sets = candidate_sets(facts, answer_spaces, objects)
    asked = len(pairs)
    pairs = distinct_statement_inputs(pairs, sets, {} if scored is None else scored)
    sizes = pairs["relation"].map({r: len(c) for r, c in sets.items()}).fillna(0).to_numpy(np.int64)
    statements = int(sizes.sum())
    if tokenizer is None:
        return Cost(asked, statements, None, None)

    before = [t.split(OBJECT, 1)[0].replace(SUBJECT, s).rstrip() for t, s in zip(pairs["template"], pairs["sub_label"])]
    after = [t.split(OBJECT, 1)[1].replace(SUBJECT, s) for t, s in zip(pairs["template"], pairs["sub_label"])]
    prefix_of, suffix_of = lengths(before), lengths(after)
    answer_of = lengths(" " + label for labels in sets.values() for label in labels)
    answers = {r: sum(answer_of[" " + label] for label in labels) for r, labels in sets.items()}
    prefix = np.array([1 + prefix_of[p] for p in before], dtype=np.int64)  # the start token and the prefix
    suffix = np.array([suffix_of[s] for s in after], dtype=np.int64)
    answer = pairs["relation"].map(answers).fillna(0).to_numpy(np.int64)
    whole = int((sizes * (prefix + suffix)).sum() + answer.sum())
    if kind == "masked":  # PLL: a copy per token, each as long as the statement (start token: [CLS], plus [SEP])
        total = 0
        for relation, labels in sets.items():
            rows = (pairs["relation"] == relation).to_numpy()
            for label in labels:
                length = prefix[rows] + answer_of[" " + label] + suffix[rows] + 1
                total += int(((length - 2) * length).sum())
        return Cost(asked, statements, total, None)
    # each statement's last token predicts nothing and is not placed (causal.prefix_tree_rows);
    # exact where no statement of a pair is a prefix of another's
    shared = int(prefix.sum() + (sizes * suffix).sum() + answer.sum()) - statements
    return Cost(asked, statements, whole, shared)


def distinct_statement_inputs(pairs: pd.DataFrame, sets: dict[str, list[str]], scored: dict) -> pd.DataFrame:
    """The pairs whose (prompt, subject, C_r) no earlier pair (of this part, or of the parts
    ``scored`` holds) has, each once; ``scored`` gains them (``{"sets": {labels: id}, "inputs":
    set}``)."""
    set_ids, done = scored.setdefault("sets", {}), scored.setdefault("inputs", set())
    ids = {relation: set_ids.setdefault(tuple(labels), len(set_ids)) for relation, labels in sets.items()}
    keys = zip(pairs["template"], pairs["sub_label"], pairs["relation"].map(ids))
    new = [key not in done and not done.add(key) for key in keys]  # add() returns None: first sight only
    return pairs[np.array(new, dtype=bool)]


def run_cost(
    parts: list[tuple[pd.DataFrame, pd.DataFrame]],
    score: str,
    kind: str,
    tokenizer=None,
    answer_spaces=None,
    objects=None,
):
    """The sum of ``cost`` over a run's parts (``(facts, prompts)`` of each prompt set and split),
    a statement input several parts share counted once, as the probe scores it. ``objects``: per
    part, a drawn run's C_r where no answer space is declared (``probe.candidate_sets``)."""
    cache, scored = {}, {}
    objects = objects or [None] * len(parts)
    costs = [
        cost(facts, prompts, score, kind, tokenizer, answer_spaces, cache, scored, of)
        for (facts, prompts), of in zip(parts, objects)
    ]
    tokens = None if tokenizer is None else sum(c.tokens for c in costs)
    shared = (
        None if tokenizer is None or score != "statement" or kind == "masked" else sum(c.shared_tokens for c in costs)
    )
    return Cost(sum(c.pairs for c in costs), sum(c.inputs for c in costs), tokens, shared)


# --- the multi-token facts' methods (lpaqa.multitoken; knowprobe.lpaqa.multitoken_probe) --------

TOGETHER = "open decoding together"  # multitoken_costs' entry for the open methods run in one


@dataclass(frozen=True)
class MethodCost:
    pairs: int  # (fact, template) pairs asked
    rows: int  # sequences the model runs, summed over decoding steps (statement: statements)
    tokens: int | None  # their tokens (None: no tokenizer yet)

    def line(self, method: str) -> str:
        what = "statements" if method == "statement" else "sequences run (summed over steps)"
        text = f"{method}: {self.pairs:,} (fact, template) pairs, {self.rows:,} {what}"
        return text + (f", {self.tokens:,} tokens" if self.tokens is not None else " (tokens: no tokenizer yet)")


def multitoken_costs(
    part: pd.DataFrame,
    templates: pd.DataFrame,
    facts: pd.DataFrame,
    methods: list[str],
    kind: str,
    tokenizer=None,
    max_masks: int = 5,
    max_new_tokens: int = 16,
    together: bool = False,
) -> dict[str, MethodCost]:
    """What each of ``methods`` costs on the facts ``part`` asked with ``templates`` (relation,
    template) of their relation, a relation's candidate set being its distinct objects in ``facts``
    (both halves): ``statement`` as the LPAQA statement score above (a masked model's tokens are
    its PLL copies', a causal model's those after prefix sharing); ``mlama`` one row per pair and
    distinct candidate length k (the prompt with k masks); ``independent`` M rows a pair (1..M
    masks, one pass), ``order`` and ``confidence`` m passes for m masks; ``generate`` at most
    ``max_new_tokens`` passes a pair, the first over the prefix and each later one over one new
    token (the key/value cache, ``scoring.decoding.uses_cache``; a model that cannot take left
    padding runs each pass over the prefix and what was generated, more), so generation's figures
    are upper bounds. The prompts are tokenized once for all the
    methods. ``together`` (the train half, which the probe decodes with every open-decoding method
    in one run, ``scoring.masked_decode_jointly``): where two or more of them are asked, the entry
    ``TOGETHER`` gives what they run together, at most: their sum less the first pass of each
    (pair, m) run once instead of once a method (later passes that two methods share while they
    fill alike depend on the model and are not counted)."""
    from .probe import candidate_sets, next_token_prefix

    sets = candidate_sets(facts)
    asked = pairs_of(part, templates)
    n, costs = len(asked), {}
    counted = tokenizer is not None
    if counted and set(methods) & {"mlama", "independent", "order", "confidence"}:
        # the prompt with the subject in [X] and one mask in [Y], special tokens included
        one_mask = [
            t.replace(SUBJECT, s.strip()).replace(OBJECT, tokenizer.mask_token)
            for t, s in zip(asked["template"], asked["sub_label"])
        ]
        length = np.array([len(ids) for ids in tokenizer(one_mask)["input_ids"]], dtype=np.int64)
    masks = np.arange(1, max_masks + 1)
    for method in methods:
        if method == "statement":
            statement = cost(part, templates, "statement", kind, tokenizer, sets)
            costs[method] = MethodCost(statement.pairs, statement.inputs, statement.shared_tokens or statement.tokens)
        elif method == "generate":
            tokens = None
            if counted:
                prefixes = [next_token_prefix(t, s) for t, s in zip(asked["template"], asked["sub_label"])]
                prefix = np.array([1 + len(ids) for ids in tokenizer(prefixes, add_special_tokens=False)["input_ids"]])
                tokens = int(prefix.sum()) + n * (max_new_tokens - 1)
            costs[method] = MethodCost(n, n * max_new_tokens, tokens)
        elif method == "mlama":
            if counted:
                labels = sorted({label for labels in sets.values() for label in labels})
                spaced = tokenizer([" " + label for label in labels], add_special_tokens=False)["input_ids"]
                size = dict(zip(labels, map(len, spaced)))
                ks = {r: {size[label] for label in labels} for r, labels in sets.items()}
            else:
                ks = {r: {1} for r in sets}  # unknown without a tokenizer: one row a pair at least
            per_pair = [sorted(ks.get(r, ())) for r in asked["relation"]]
            tokens = (
                int(sum(sum(base + k - 1 for k in ks_) for base, ks_ in zip(length, per_pair))) if counted else None
            )
            costs[method] = MethodCost(n, sum(len(k) for k in per_pair), tokens)
        else:  # open decoding: independent, order, confidence
            passes = np.ones_like(masks) if method == "independent" else masks
            tokens = int(((length[:, None] + masks[None, :] - 1) * passes[None, :]).sum()) if counted else None
            costs[method] = MethodCost(n, int(n * passes.sum()), tokens)
    open_methods = [m for m in methods if m in OPEN]
    if together and len(open_methods) > 1:
        again = len(open_methods) - 1  # first passes no longer run once per method
        first_tokens = int((length[:, None] + masks[None, :] - 1).sum()) if counted else None
        costs[TOGETHER] = MethodCost(
            n,
            sum(costs[m].rows for m in open_methods) - again * n * max_masks,
            sum(costs[m].tokens for m in open_methods) - again * first_tokens if counted else None,
        )
    return costs
