"""Multi-token answers asked three ways (issue 41): a closed candidate set, open decoding at masks
and greedy generation, on the multi-token facts (``knowprobe.lpaqa.multitoken``), with LPAQA's
prompt sets and Top-1 selection.

The facts of each relation are split in two by a seeded draw (``trex_train.split``): every prompt
of the configured sets is asked on the *train* half, each set's Top-1 prompt per relation and method
is the one with the best train accuracy (exact match; ties to the set's own rank, as LPAQA's
``prompt_rank.prompt_order``), and the *test* half is asked with the selected prompts only. Methods:

* ``statement`` (masked and causal): every candidate of the relation's set C_r (its distinct gold
  objects, both halves, sorted by label) filled into the prompt, the statement scored whole by the
  scoring layer's ``statement_logprob``; the best statement's object is the answer (ties: the first).
* ``mlama`` (masked): Kassner et al.'s score over the same C_r, a candidate of k tokens at k masks
  (``scoring.mlama_scores``); the best is the answer (ties: the first).
* ``independent``, ``order``, ``confidence`` (masked): X-FACTR's open decoding with 1..M masks
  (``scoring.masked_decode``; on the train half all three in one run, ``masked_decode_jointly``, so
  that a forward their rows share runs once); the decoded text is the answer.
* ``generate`` (causal): greedy continuation of the prompt's text before ``[Y]`` (subject filled),
  stopped at a newline or the template's next literal text (``scoring.causal_generate``).

Every answer is judged against the gold label and its aliases by exact match after
lm-evaluation-harness's normalisation and by PopQA's substring rule (``knowprobe.answers``).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..answers import matches_exact, matches_substring
from ..config import schema_defaults
from ..contracts import MULTITOKEN_PREDICTIONS, MULTITOKEN_SELECTION
from ..io import KnowprobeError, left_out_line, quoted
from ..prompts import OBJECT, SUBJECT
from ..scoring import causal_generate, masked_decode, masked_decode_jointly, mlama_scores
from ..scoring.decoding import METHODS as OPEN  # open decoding at masks: masked_decode's methods
from ..statements import fill_statement
from .probe import candidate_sets, next_token_prefix
from .prompt_rank import prompt_order
from .trex_train import sampled, split

log = logging.getLogger(__name__)

_DEFAULTS = schema_defaults("lpaqa", "multitoken")
METHODS = {
    "masked": ("statement", "mlama", "independent", "order", "confidence"),
    "causal": ("statement", "generate"),
}
# what each method's answer is chosen from and by, as the rows and tables state it
_LENGTH = "length by the {length_by} of the log-probs ({length_reading})"
DEFINITIONS = {
    "statement": "closed: the relation's distinct objects (C_r), ranked by the statement score (ties: first)",
    "mlama": "closed: C_r, ranked by the mean log-prob of the candidate's k tokens at k masks (ties: first)",
    "independent": "open: 1..M masks, each filled by its argmax in one pass; " + _LENGTH,
    "order": "open: 1..M masks, the left-most unfilled filled first; " + _LENGTH,
    "confidence": "open: 1..M masks, the most confident unfilled filled first; " + _LENGTH,
    "generate": "open: greedy, at most {max_new_tokens} tokens, cut at a newline or the template's next text",
}
# which of X-FACTR's readings open decoding's length choice is (docs/scoring.md)
LENGTH_READINGS = {"sum": "X-FACTR ana.py, the paper's", "mean": "X-FACTR ana.py --norm"}
_SLOTS = re.compile(re.escape(SUBJECT) + "|" + re.escape(OBJECT))


@dataclass(frozen=True)
class AskSettings:
    """How the methods ask (the config's ``lpaqa.multitoken`` keys of the same names)."""

    max_masks: int = _DEFAULTS["max_masks"]  # M, the most masks open decoding tries
    length_by: str = _DEFAULTS["length_by"]  # mean or sum: how open decoding picks its length
    max_new_tokens: int = _DEFAULTS["max_new_tokens"]  # generation's limit
    pll: str = "within_word_l2r"  # the masked statement score's pseudo-log-likelihood

    def definition(self, method: str) -> str:
        reading = LENGTH_READINGS[self.length_by]
        return DEFINITIONS[method].format(
            length_by=self.length_by, length_reading=reading, max_new_tokens=self.max_new_tokens
        )


def check_methods(methods, kind: str) -> list[str]:
    """The methods asked of a model of ``kind``, each known and fit for it."""
    methods = list(methods)
    wrong = [m for m in methods if m not in METHODS.get(kind, ())]
    if wrong:
        raise KnowprobeError(
            f"lpaqa.multitoken.methods.{kind}: {', '.join(map(repr, wrong))} not a method for a {kind} model "
            f"(one of {', '.join(METHODS.get(kind, ()))})"
        )
    return methods


def stop_text(template: str) -> str:
    """Generation's stop: the template's literal text after ``[Y]`` up to the next slot or its end,
    stripped ("." for "[X] was born in [Y] ."; "is the capital of" for "[Y] is the capital of [X]")."""
    after = template.split(OBJECT, 1)[1]
    return _SLOTS.split(after, 1)[0].strip()


def with_subject(template: str, subject: str) -> str:
    """The prompt with the subject in ``[X]`` and ``[Y]`` left open (the decoders' input)."""
    return template.replace(SUBJECT, subject.strip())


def pair(facts: pd.DataFrame, templates: pd.DataFrame) -> pd.DataFrame:
    """One row per (fact, template) of the same relation (``templates``: relation, template)."""
    pairs = facts.merge(templates[["relation", "template"]].drop_duplicates(), on="relation", how="inner")
    return pairs.sort_values(["relation", "template", "fact_id"], kind="stable").reset_index(drop=True)


STATEMENTS_AT_ONCE = 1_000_000  # statements built and scored in one call (whole pairs each)


def chunks(ends: np.ndarray, limit: int) -> list[tuple[int, int]]:
    """Row ranges [start, stop) whose items (``ends``: the running total after each row) add up to
    at most ``limit`` each, a row larger than ``limit`` alone in its range."""
    out, start, base = [], 0, 0
    for row, end in enumerate(ends):
        if end - base > limit and row > start:
            out.append((start, row))
            start, base = row, int(ends[row - 1])
    if len(ends):
        out.append((start, len(ends)))
    return out


def ask(scorer, method: str, pairs: pd.DataFrame, sets: dict[str, list[str]], settings: AskSettings) -> pd.DataFrame:
    """Each pair's answer under ``method``: ``prediction`` (text), ``prediction_score`` (the score
    it won by: statement log-likelihood, mean mLAMA log-prob, open decoding's mean or sum over its
    tokens, generation's summed log-prob) and ``prediction_tokens`` (its tokens: the candidate's in
    the filled prompt for mlama, the decoded or generated ones; for statement the candidate's label
    tokens are not separate, -1)."""
    n = len(pairs)
    if not n:
        return pd.DataFrame({"prediction": [], "prediction_score": [], "prediction_tokens": []})
    templates, subjects, relations = pairs["template"].tolist(), pairs["sub_label"].tolist(), pairs["relation"].tolist()
    if method == "statement":
        sizes = np.array([len(sets[r]) for r in relations], dtype=np.int64)
        best_labels, best_scores = [], []
        # a full relation asks hundreds of thousands of pairs times |C_r| statements: held as text
        # a chunk of pairs at a time (whole pairs, so that a pair's candidates share its prefix)
        ends = np.cumsum(sizes)
        for start, stop in chunks(ends, STATEMENTS_AT_ONCE):
            texts = [
                fill_statement(template, subject, label).text
                for template, subject, relation in zip(
                    templates[start:stop], subjects[start:stop], relations[start:stop]
                )
                for label in sets[relation]
            ]
            flat = scorer.statement_logprob(texts, pll=settings.pll)
            offset = 0
            for relation, k in zip(relations[start:stop], sizes[start:stop]):
                b = int(np.argmax(flat[offset : offset + k]))  # ties: the first
                best_labels.append(sets[relation][b])
                best_scores.append(float(flat[offset + b]))
                offset += k
        return pd.DataFrame({"prediction": best_labels, "prediction_score": best_scores, "prediction_tokens": -1})
    prompts = [with_subject(t, s) for t, s in zip(templates, subjects)]
    if method == "mlama":
        scores = mlama_scores(scorer, prompts, [sets[r] for r in relations])
        best = scores.best
        rows = np.arange(n)
        return pd.DataFrame(
            {
                "prediction": [sets[r][b] for r, b in zip(relations, best)],
                "prediction_score": scores.scores[rows, best],
                "prediction_tokens": scores.token_counts[rows, best],
            }
        )
    if method in OPEN:
        return decoded_answers(masked_decode(scorer, prompts, settings.max_masks, method, settings.length_by))
    if method == "generate":
        prefixes = [next_token_prefix(t, s) for t, s in zip(templates, subjects)]
        generated = causal_generate(scorer, prefixes, [stop_text(t) for t in templates], settings.max_new_tokens)
        return pd.DataFrame(
            {
                "prediction": generated.texts,
                "prediction_score": generated.logprobs,
                "prediction_tokens": [len(ids) for ids in generated.token_ids],
            }
        )
    raise KnowprobeError(f"method {method!r}: one of {', '.join(dict.fromkeys(sum(METHODS.values(), ())))}")


def decoded_answers(decoded) -> pd.DataFrame:
    return pd.DataFrame(
        {"prediction": decoded.texts, "prediction_score": decoded.score, "prediction_tokens": decoded.lengths}
    )


def ask_all(
    scorer, methods: list[str], pairs: pd.DataFrame, sets: dict[str, list[str]], settings: AskSettings
) -> dict[str, pd.DataFrame]:
    """``ask`` for each of ``methods``, the open-decoding ones in one run
    (``scoring.masked_decode_jointly``: a forward their rows share runs once)."""
    together = [m for m in methods if m in OPEN]
    answers = {}
    if together and len(pairs):
        prompts = [with_subject(t, s) for t, s in zip(pairs["template"], pairs["sub_label"])]
        decoded = masked_decode_jointly(scorer, prompts, together, settings.max_masks, settings.length_by)
        answers = {method: decoded_answers(decoded[method]) for method in together}
    return {m: answers[m] if m in answers else ask(scorer, m, pairs, sets, settings) for m in methods}


def judge(pairs: pd.DataFrame, answers: pd.DataFrame) -> pd.DataFrame:
    """``answers`` with ``correct_exact`` and ``correct_substring`` against each pair's gold
    label and its aliases (``knowprobe.answers``)."""
    gold = list(zip(answers["prediction"], pairs["obj_label"], pairs["obj_aliases"]))
    return answers.assign(
        correct_exact=[matches_exact(p, g, a) for p, g, a in gold],
        correct_substring=[matches_substring(p, g, a) for p, g, a in gold],
    )


def set_templates(prompts: pd.DataFrame) -> pd.DataFrame:
    """A prompt set's distinct templates per relation, best first (the set's rank, then its order)."""
    ordered = prompts.reset_index(drop=True).assign(position=lambda f: np.arange(len(f)))
    ordered = ordered.sort_values(["relation", "rank", "position"], kind="stable")
    return ordered.drop_duplicates(["relation", "template"])[["relation", "template", "rank"]]


def select(train: pd.DataFrame, prompt_sets: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Top-1 per prompt set, method and relation (``multitoken_selection``): the template with the
    best exact-match accuracy on the relation's train facts, ties to the set's rank then its order
    (``prompt_rank.prompt_order``); a relation without train facts keeps its set's best-ranked."""
    # each (relation, method)'s correctness [template, fact], whichever sets' templates read it
    grids = {
        key: asked.pivot_table(index="template", columns="fact_id", values="correct_exact", aggfunc="first")
        for key, asked in train.groupby(["relation", "method"], sort=False)
    }
    methods = list(dict.fromkeys(train["method"]))
    rows = []
    for name, prompts in prompt_sets.items():
        for relation, templates in set_templates(prompts).groupby("relation", sort=True):
            for method in (m for m in methods if (relation, m) in grids):
                grid = grids[relation, method].reindex(templates["template"])
                correct = grid.fillna(False).to_numpy(dtype=bool)
                order = prompt_order(correct, templates["rank"].to_numpy())
                best = order[0]
                rows.append(
                    {
                        "prompt_set": name,
                        "method": method,
                        "relation": relation,
                        "template": templates["template"].iat[best],
                        "prompts": len(templates),
                        "train_facts": correct.shape[1],
                        "train_accuracy": float(correct[best].mean()) if correct.shape[1] else float("nan"),
                    }
                )
    return pd.DataFrame(rows, columns=MULTITOKEN_SELECTION.columns)


LEFT_OUT_COLUMNS = ["what", "reason", "description", "n", "example"]
# what a model cannot take, left out of its run and counted (``leave_out``)
LEFT_OUT_WHAT = {
    "template": "templates holding the masked model's own mask token",
    "fact": "facts whose subject or gold object the model cannot take under one of their templates",
    "candidate": "candidates (C_r) whose statement the model cannot take with one of the relation's facts",
}


def leave_out(
    scorer, facts: pd.DataFrame, templates: pd.DataFrame, sets: dict[str, list[str]], methods, settings: AskSettings
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, list[str]], pd.DataFrame]:
    """What this model cannot take, left out of its run: a template holding the masked model's
    own mask token (``mask_token``); a fact whose statement with its gold object is one the model
    cannot score under one of its templates (``statement_problems``: ``too_long``, ``no_tokens``,
    ``mask_token``), or whose prompt is too long with open decoding's masks or generation's new
    tokens (``too_long``); a candidate of C_r whose statement with one of the relation's kept facts
    is one the model cannot score. Returns the facts, templates and sets kept and a table
    (``LEFT_OUT_COLUMNS``) counting the rest, each reason with its first message (quoted to 80
    characters). Every other fact and candidate is asked as before."""
    rows: list[dict] = []

    def count(what: str, reason: str, message: str) -> None:
        for row in rows:
            if row["what"] == what and row["reason"] == reason:
                row["n"] += 1
                return
        description = f"{LEFT_OUT_WHAT[what]} ({reason})"
        rows.append({"what": what, "reason": reason, "description": description, "n": 1, "example": message})

    mask = scorer.tokenizer.mask_token if scorer.kind == "masked" else None
    if mask:
        bad = templates["template"].str.contains(mask, regex=False)
        for relation, template in zip(templates.loc[bad, "relation"], templates.loc[bad, "template"]):
            count("template", "mask_token", f"{relation}: {quoted(template)} holds {mask!r}")
        templates = templates.loc[~bad]
    by_relation = {r: list(dict.fromkeys(g)) for r, g in templates.groupby("relation", sort=False)["template"]}
    # facts: the gold statement under each of their relation's templates
    pairs = [(f, t) for f, r in enumerate(facts["relation"]) for t in by_relation.get(r, [])]
    subjects, objects = facts["sub_label"].tolist(), facts["obj_label"].tolist()
    problems = scorer.statement_problems([fill_statement(t, subjects[f], objects[f]).text for f, t in pairs])
    if mask and any(m in OPEN for m in methods):  # open decoding: the prompt with M masks
        texts = [with_subject(t, subjects[f]).replace(OBJECT, " ".join([mask] * settings.max_masks)) for f, t in pairs]
        problems = longer(problems, texts, scorer.input_lengths(texts), scorer.length_limit, "")
    if scorer.kind == "causal" and "generate" in methods:  # generation: the prefix and its new tokens
        texts = [next_token_prefix(t, subjects[f]) for f, t in pairs]
        lengths = scorer.input_lengths(texts) + settings.max_new_tokens
        problems = longer(problems, texts, lengths, scorer.length_limit, f" with {settings.max_new_tokens} new tokens")
    out = set()
    for (f, _), problem in zip(pairs, problems):
        if problem and f not in out:
            out.add(f)
            count("fact", problem[0], f"{facts['fact_id'].iat[f]}: {problem[1]}")
    kept = facts.iloc[[f for f in range(len(facts)) if f not in out]]
    # candidates: each one's statements with the relation's kept facts under its templates
    kept_sets = {}
    for relation, candidates in sets.items():
        part = kept.loc[kept["relation"] == relation, "sub_label"].tolist()
        grid = [(c, t, s) for c in candidates for t in by_relation.get(relation, []) for s in part]
        found = scorer.statement_problems([fill_statement(t, s, c).text for c, t, s in grid])
        bad_candidates = {}
        for (c, _, _), problem in zip(grid, found):
            if problem:
                bad_candidates.setdefault(c, problem)
        for problem in bad_candidates.values():
            count("candidate", problem[0], f"{relation}: {problem[1]}")
        kept_sets[relation] = [c for c in candidates if c not in bad_candidates]
    return kept, templates, kept_sets, pd.DataFrame(rows, columns=LEFT_OUT_COLUMNS)


def longer(problems: list, texts: list[str], lengths, limit: int, what: str) -> list:
    """``problems`` with ``too_long`` added where a text's ``lengths`` pass ``limit``."""
    return [
        problem or (("too_long", f"{quoted(text)}{what} is longer than the model takes") if length > limit else None)
        for problem, text, length in zip(problems, texts, lengths)
    ]


def draw_halves(
    train: pd.DataFrame, test: pd.DataFrame, per_relation: int, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """At most ``per_relation`` facts a relation of each half (T-REx-train's seeded draw,
    ``trex_train.sampled``), and one ``LEFT_OUT_COLUMNS`` row counting the facts left out."""
    halves, left = [], 0
    for half in (train, test):
        drawn, _ = sampled(half, per_relation, seed)
        halves.append(drawn)
        left += len(half) - len(drawn)
    log.info(
        "lpaqa.probe.sample: a seeded draw (seed %d) of at most %d facts a relation of each half: %d of %d facts asked",
        seed,
        per_relation,
        len(halves[0]) + len(halves[1]),
        len(train) + len(test),
    )
    row = {
        "what": "fact",
        "reason": "not_sampled",
        "description": f"facts beyond this model's draw, {per_relation} a relation of each half (not_sampled)",
        "n": left,
        "example": "",
    }
    return halves[0], halves[1], pd.DataFrame([row] if left else [], columns=LEFT_OUT_COLUMNS)


def probe(
    facts: pd.DataFrame,
    tokens: pd.DataFrame,
    prompt_sets: dict[str, pd.DataFrame],
    scorer,
    methods: list[str],
    settings: AskSettings | None = None,
    train_share: float = _DEFAULTS["train_share"],
    seed: int = _DEFAULTS["seed"],
    sample: dict | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Ask the multi-token facts every way in ``methods`` (``multitoken_predictions``: the train
    half with every template of the sets, the test half with each set's Top-1 templates) and the
    Top-1 choices (``multitoken_selection``), and what the model could not take, left out and
    counted (``leave_out``). ``tokens``: the facts' object token counts of this
    model (``object_tokens``' rows of the model). ``sample``: this model's own draw
    (``lpaqa.probe.sample``: ``{per_relation, seed}``), at most that many facts a relation of
    each half, the rest counted as left out (``not_sampled``); the halves and the candidate sets
    are those of all facts, as every other model's."""
    settings = settings or AskSettings()
    methods = check_methods(methods, scorer.kind)
    # the split and the candidate sets of all facts, whatever this model leaves out, so that every
    # model is asked the same halves
    train, test = split(facts, train_share, seed)
    sets = candidate_sets(facts)
    drawn = None
    if sample and sample.get("per_relation"):
        train, test, drawn = draw_halves(train, test, sample["per_relation"], sample.get("seed", 0))
        facts = facts[facts["fact_id"].isin(set(train["fact_id"]) | set(test["fact_id"]))]
    templates = pd.concat([set_templates(p) for p in prompt_sets.values()], ignore_index=True)
    kept, templates, sets, left_out = leave_out(scorer, facts, templates, sets, methods, settings)
    if drawn is not None:
        left_out = pd.concat([drawn, left_out], ignore_index=True) if len(left_out) else drawn
    if len(left_out):
        log.warning("left out %s", left_out_line(left_out))
        asked = set(kept["fact_id"])
        train, test = train[train["fact_id"].isin(asked)], test[test["fact_id"].isin(asked)]
        usable = set(zip(templates["relation"], templates["template"]))
        prompt_sets = {
            name: p[[key in usable for key in zip(p["relation"], p["template"])]] for name, p in prompt_sets.items()
        }
    count_of = dict(zip(tokens["fact_id"], tokens["obj_tokens"]))
    log.info(
        "%d facts of %d relations (%d train, %d test), %d distinct templates in %d prompt sets; methods %s",
        len(facts),
        facts["relation"].nunique(),
        len(train),
        len(test),
        templates[["relation", "template"]].drop_duplicates().shape[0],
        len(prompt_sets),
        ", ".join(methods),
    )

    # a causal model's rows name the token it read before every prompt (docs/scoring.md)
    start = scorer.definition_of_start()
    start_note = "" if start is None else f"; after the start token {start}"

    def rows(part: str, pairs: pd.DataFrame, method: str, answered: pd.DataFrame) -> pd.DataFrame:
        answers = judge(pairs, answered)
        return pd.DataFrame(
            {
                "relation": pairs["relation"].to_numpy(),
                "fact_id": pairs["fact_id"].to_numpy(),
                "split": part,
                "template": pairs["template"].to_numpy(),
                "method": method,
                "definition": settings.definition(method) + start_note,
                "obj_tokens": pairs["fact_id"].map(count_of).to_numpy(),
                **{column: answers[column].to_numpy() for column in answers.columns},
            }
        )

    # the train half asks every template by every method, so its open-decoding methods run together
    train_pairs = pair(train, templates)
    log.info("%s: train half, %d (fact, template) pairs", ", ".join(methods), len(train_pairs))
    answered = ask_all(scorer, methods, train_pairs, sets, settings)
    train_rows = pd.concat([rows("train", train_pairs, m, answered[m]) for m in methods], ignore_index=True)
    selection = select(train_rows, prompt_sets)
    asked_test = []
    for method in methods:  # each method's own Top-1 templates
        chosen = selection.loc[selection["method"] == method, ["relation", "template"]]
        test_pairs = pair(test, chosen)
        log.info("%s: test half, %d (fact, template) pairs", method, len(test_pairs))
        asked_test.append(rows("test", test_pairs, method, ask(scorer, method, test_pairs, sets, settings)))
    predictions = pd.concat([train_rows, *asked_test], ignore_index=True)
    missing = predictions["obj_tokens"].isna()
    if missing.any():
        raise KnowprobeError(f"{int(missing.sum())} rows' facts have no token count for this model (object_tokens)")
    return predictions[MULTITOKEN_PREDICTIONS.columns], selection, left_out
