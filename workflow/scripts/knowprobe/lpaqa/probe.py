"""LPAQA's probe: log-probabilities of the candidate objects at the mask, per (fact, prompt).

For each pair the subject fills ``[X]`` and the mask token ``[Y]``; the shared scoring layer
(:mod:`knowprobe.scoring`) batches the filled prompts and reads the distribution at the mask.
The gold object's log-prob (over the full vocabulary) and rank among the candidates, and the
top-k candidates, are stored (the ``probe`` contract), and beside them each pair's final hidden
state at the mask: from it the selection stage recomputes the log-prob of every candidate, so
that selection and ensembles never rerun the model.

Google-RE's relations are not LAMA T-REx relations, so generated prompt sets have no prompts for
them: a Google-RE relation is probed with its own prompts in the set (the manual template) and
those of the T-REx relation it maps to (``lpaqa.google_re_relations``: place_of_birth → P19, ...).
"""

from __future__ import annotations

import contextlib
import logging
from collections import Counter
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
import torch

from ..contracts import PROBE, to_table
from ..io import KnowprobeError
from ..prompts import OBJECT, SUBJECT, fill_template, object_at_end
from ..statements import fill_statement
from .lama import objects_by_relation

log = logging.getLogger(__name__)


HIDDEN_CONTRACT = "probe_hidden"


def prompts_for(prompts: pd.DataFrame, relation_map: dict[str, str]) -> pd.DataFrame:
    """The prompts a dataset is probed with: for every ``relation_map`` entry R → T, R's own prompts
    and then T's under R's name (a template R already has is not repeated)."""
    own = prompts[~prompts["relation"].isin(relation_map)]
    borrowed = []
    for relation, source in relation_map.items():
        rows = pd.concat([prompts[prompts["relation"] == relation], prompts[prompts["relation"] == source]])
        borrowed.append(rows.assign(relation=relation).drop_duplicates("template", keep="first"))
    return pd.concat([own, *borrowed], ignore_index=True)


def write_hidden(hidden, path, rows: int) -> None:
    """The final hidden states of a probe table's rows, in the model's dtype (safetensors), with
    their SHA-256 recorded beside them (``PATH.sha256``; ``knowprobe.io.record_digest``)."""
    from safetensors.torch import save_file

    from ..contracts import VERSION
    from ..io import atomic_path

    metadata = {"knowprobe.contract": HIDDEN_CONTRACT, "knowprobe.version": VERSION, "rows": str(rows)}
    with atomic_path(path, digest=True) as tmp:
        save_file({"hidden": hidden.contiguous()}, str(tmp), metadata=metadata)
        sort_header(tmp)


def sort_header(path) -> None:
    """A safetensors file's JSON header rewritten in place with its keys sorted. safetensors writes
    the metadata from a hash map whose order changes from one write to the next (the same tensor
    and metadata gave 6 different files in 20 writes), so a rerun's hidden states and their
    recorded SHA-256 differed from the last run's though every value was equal; sorted, a file's
    bytes follow from its content. The header keeps its length (the same keys and values, padded
    with blanks as safetensors pads it), so the tensors' offsets stay valid."""
    import json
    import struct

    with open(path, "r+b") as handle:
        (length,) = struct.unpack("<Q", handle.read(8))
        header = json.loads(handle.read(length))
        text = json.dumps(header, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        if len(text) > length:  # the writer's own header is as compact as this one; never expected
            raise KnowprobeError(f"{path}: its safetensors header ({length} bytes) cannot be rewritten sorted")
        handle.seek(8)
        handle.write(text.ljust(length, b" "))


@contextlib.contextmanager
def open_hidden(path, rows: int | None = None):
    """A probe's hidden-state file, open (safetensors' ``safe_open``) once its bytes are checked
    against the digest recorded as it was written and its metadata against ``write_hidden``'s
    (with ``rows``, the row count of its table). Every fault is one KnowprobeError naming it."""
    from safetensors import safe_open

    from ..contracts import VERSION
    from ..io import verify_digest

    verify_digest(path)
    with contextlib.ExitStack() as stack:
        try:
            handle = stack.enter_context(safe_open(str(path), framework="pt"))
            metadata = handle.metadata() or {}
            shape = handle.get_slice("hidden").get_shape()
        except Exception as error:  # safetensors raises several types; all mean "not such a file"
            raise KnowprobeError(f"{path}: not a probe's hidden states ({type(error).__name__}: {error})") from None
        if metadata.get("knowprobe.contract") != HIDDEN_CONTRACT or metadata.get("knowprobe.version") != VERSION:
            raise KnowprobeError(f"{path}: expected {HIDDEN_CONTRACT} version {VERSION}, found {metadata}")
        if rows is not None and shape[0] != rows:
            raise KnowprobeError(f"{path}: {shape[0]} hidden states for a table of {rows} rows")
        yield handle


def read_hidden(path, rows: int):
    """The hidden states written by ``write_hidden``, checked (``open_hidden``) against the rows of
    their table."""
    with open_hidden(path, rows) as handle:
        return handle.get_tensor("hidden")


def pair_facts_with_prompts(facts: pd.DataFrame, prompts: pd.DataFrame) -> pd.DataFrame:
    """One row per (fact, prompt) of the same relation; ``prompt_id`` numbers the prompt set's rows."""
    prompts = prompts.reset_index(drop=True).assign(prompt_id=lambda f: np.arange(len(f), dtype=np.int32))
    without = sorted(set(facts["relation"]) - set(prompts["relation"]))
    if without:
        lost = int(facts["relation"].isin(without).sum())
        log.warning(
            "%d facts of %d relations have no prompt in this set and are not probed: %s",
            lost,
            len(without),
            ", ".join(without),
        )
    pairs = facts.merge(prompts[["relation", "prompt_id", "template", "source", "rank"]], on="relation", how="inner")
    return pairs.sort_values(["relation", "prompt_id", "fact_id"], kind="stable").reset_index(drop=True)


SCORES = ("mask", "next_token", "statement")
# what may follow [Y] for it to count as the prompt's end (a sentence's last punctuation)


def next_token_prefix(template: str, subject: str) -> str:
    """The next-token score's input (LAMA's GPT connector): the prompt's text before ``[Y]``, the
    subject filled, the right context dropped, trailing whitespace stripped (the candidate's
    word-initial token carries its space)."""
    return template.split(OBJECT, 1)[0].replace(SUBJECT, subject.strip()).rstrip()


def input_text(score: str, mask: str | None = None):
    """The function filling a (template, subject) into the model's input under ``score``."""
    if score == "mask":
        return lambda template, subject: fill_template(template, subject, mask)
    if score == "next_token":
        return next_token_prefix
    raise KnowprobeError(f"score {score!r} has no single input per (fact, prompt) (one of {', '.join(SCORES)})")


def default_score(kind: str) -> str:
    return "mask" if kind == "masked" else "next_token"


def probe(facts: pd.DataFrame, prompts: pd.DataFrame, scorer, candidates: pd.DataFrame, top_k: int, score=None):
    """Probe every (fact, prompt) pair (``score``: mask for a masked LM, next_token for a causal
    one, the default of the scorer's kind): a table of the ``probe`` contract and the final
    hidden state at the mask (the prefix's last token) of each of its rows."""
    [(_, table, hidden)] = probe_parts({"part": (facts, prompts)}, scorer, candidates, top_k, score=score)
    return table, hidden


def probe_parts(
    parts: dict, scorer, candidates: pd.DataFrame, top_k: int, reused: list[tuple] = (), score: str | None = None
) -> Iterator[tuple[str, pa.Table, torch.Tensor]]:
    """Probe the (fact, prompt) pairs of several parts at once (each a prompt set on a dataset
    split: ``name -> (facts, prompts)``), each distinct input (a template filled with a subject)
    scored once whichever parts ask for it; yields per part its name, a table of the ``probe``
    contract and its rows' final hidden states at the mask, as ``probe`` gives them part by part
    (one part at a time: a part's hidden states, one row per pair, are built only when it is
    yielded, so that the caller writes and drops them before the next). ``reused``: the
    ``(table, hidden states)`` files of earlier probes of the model: inputs they hold are not run
    through the encoder again, only the LM head reads their hidden states (``known_inputs``).
    ``score``: mask (a masked LM: the candidates at the mask token) or next_token (a causal LM:
    the candidates as the next token after the prompt's text before ``[Y]``); None: the one of
    the scorer's kind."""
    score = score or default_score(scorer.kind)
    needed = {"mask": "masked", "next_token": "causal"}.get(score)
    if needed is None:
        raise KnowprobeError(f"score {score!r}: probe_parts scores mask or next_token (statement: probe_statements)")
    if scorer.kind != needed:
        raise KnowprobeError(
            f"LPAQA's {score} score ranks candidates "
            + ("at a mask token" if score == "mask" else "as the next token")
            + f": it needs a model of kind {needed}"
        )
    text_of = input_text(score, scorer.tokenizer.mask_token if score == "mask" else None)
    paired = {}
    for name, (facts, prompts) in parts.items():
        pairs = pair_facts_with_prompts(facts, prompts)
        if facts.empty:  # a split asked for none (lpaqa.trex_train.source: none): nothing is missing
            log.info("%s: no facts in this split; the outputs are empty", name)
        elif pairs.empty:
            log.warning(
                "%s: no (fact, prompt) pair to probe: the prompt set has no prompt for any of the %d relations of "
                "these facts; the outputs are empty",
                name,
                facts["relation"].nunique(),
            )
        paired[name] = pairs
        if score == "next_token" and not pairs.empty:
            log_right_context(name, pairs)
    texts = [text_of(t, s) for pairs in paired.values() for t, s in zip(pairs["template"], pairs["sub_label"])]
    gold = np.concatenate([pairs["obj_token_id"].to_numpy(dtype=np.int64) for pairs in paired.values()] or [[]])
    log.info(
        "probing %d (fact, prompt) pairs of %d parts (score %s): %d candidates, top_k=%d, device=%s, dtype=%s",
        len(texts),
        len(parts),
        score,
        len(candidates),
        min(top_k, len(candidates)),
        scorer.device,
        next(scorer.model.parameters()).dtype,
    )
    known = known_inputs(reused, set(texts), text_of) if reused and texts else None
    if reused:
        log.info("%d distinct inputs of these parts were scored by an earlier probe", len(known[0]) if known else 0)
    hidden_size = scorer.model.config.hidden_size
    dtype = next(scorer.model.parameters()).dtype
    if texts:
        scores = scorer.slot_scores(
            texts, candidates["token_id"].to_numpy(), gold.astype(np.int64), top_k=top_k, keep_hidden=True, known=known
        )
        log.info(
            "%d pairs, %d distinct inputs scored (%.2f pairs an input)",
            len(texts),
            scores.distinct_texts,
            len(texts) / max(1, scores.distinct_texts),
        )
    del texts, gold  # a Python string per pair: not kept while the parts are written
    word_of = dict(zip(candidates["token_id"], candidates["word"]))
    start = 0
    for name in list(paired):
        pairs = paired.pop(name)
        if pairs.empty:
            empty = torch.empty((0, hidden_size), dtype=dtype)
            yield name, to_table(pa.table({column: [] for column in PROBE.columns}), PROBE), empty
            continue
        rows = slice(start, start + len(pairs))
        start += len(pairs)
        index = scores.index[rows]
        topk_ids, topk_logprobs = scores.topk_ids[index], scores.topk_logprobs[index]
        table = pa.Table.from_pandas(pairs[list(PROBE.columns[:9])], preserve_index=False)
        for column, values in [
            ("gold_logprob", pa.array(scores.target_logprobs[rows, 0])),
            ("gold_rank", pa.array(scores.target_ranks[rows, 0])),
            ("prediction", pa.array([word_of[i] for i in topk_ids[:, 0]], pa.string())),
            ("topk_ids", rows_as_lists(topk_ids)),
            ("topk_logprobs", rows_as_lists(topk_logprobs)),
            ("score", pa.array([score] * len(pairs), pa.string())),
        ]:
            table = table.append_column(column, values)
        yield name, to_table(table, PROBE), scores.hidden[torch.from_numpy(index)]


def read_answer_space(path) -> dict[str, list[str]]:
    """A declared answer space: a JSON object ``{relation: [object label, ...]}`` (each list
    non-empty, without repeats)."""
    import json
    from pathlib import Path

    try:
        spaces = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise KnowprobeError(f"{path}: not a readable JSON answer space ({error})") from None
    if not isinstance(spaces, dict):
        raise KnowprobeError(f"{path}: an answer space is a JSON object {{relation: [object label, ...]}}")
    for relation, labels in spaces.items():
        if not isinstance(labels, list) or not labels or not all(isinstance(label, str) for label in labels):
            raise KnowprobeError(f"{path}: relation {relation!r}: a non-empty list of object labels is needed")
        if len(set(labels)) != len(labels):
            raise KnowprobeError(f"{path}: relation {relation!r} lists an object twice")
    return spaces


def candidate_sets(
    facts: pd.DataFrame,
    answer_spaces: dict[str, list[str]] | None = None,
    objects: dict[str, list[str]] | None = None,
) -> dict[str, list[str]]:
    """Each relation's candidate set C_r: its declared answer space, else the distinct gold
    objects of its facts (sorted by label), or where ``objects`` lists the relation, those (the
    objects of every fact a drawn run's filter kept, ``lama.objects_by_relation``)."""
    spaces = {**(objects or {}), **(answer_spaces or {})}
    own = objects_by_relation(facts)
    return {relation: list(spaces[relation]) if relation in spaces else labels for relation, labels in own.items()}


def in_answer_space(name: str, facts: pd.DataFrame, answer_spaces: dict[str, list[str]] | None) -> pd.DataFrame:
    """The facts whose gold object is in their relation's declared answer space (relations it does
    not list keep all theirs); the others are counted in the log."""
    if not answer_spaces:
        return facts
    inside = [
        relation not in answer_spaces or label in answer_spaces[relation]
        for relation, label in zip(facts["relation"], facts["obj_label"])
    ]
    inside = np.array(inside, dtype=bool)
    if not inside.all():
        outside = facts[~inside].groupby("relation").size()
        log.warning(
            "%s: %d facts left out, their gold object not in the declared answer space: %s",
            name,
            int((~inside).sum()),
            ", ".join(f"{relation} {n}" for relation, n in outside.items()),
        )
    return facts[inside]


def normalised(scores: np.ndarray) -> np.ndarray:
    """ℓ(c) = s(c) - logsumexp over the candidates, per row of ``scores[n, |C_r|]`` (float64)."""
    top = scores.max(axis=1, keepdims=True)
    return scores - (top + np.log(np.exp(scores - top).sum(axis=1, keepdims=True)))


def probe_statements(
    parts: dict,
    scorer,
    top_k: int,
    pll: str = "within_word_l2r",
    answer_spaces: dict[str, list[str]] | None = None,
    objects: dict[str, dict[str, list[str]]] | None = None,
    reused: dict[str, list[tuple]] | None = None,
) -> Iterator[tuple[str, pa.Table, torch.Tensor]]:
    """The statement score of the (fact, prompt) pairs of several parts (``name -> (facts,
    prompts)``), a masked or causal scorer: for every pair and every candidate c of the relation's
    candidate set C_r (``candidate_sets``) the statement (``fill_statement``: the prompt with the
    subject in ``[X]`` and c in ``[Y]``, first character upper-cased) scored whole by the scoring
    layer's ``statement_logprob`` (``pll``: a masked model's pseudo-log-likelihood). Yields per
    part its name, a table of the ``probe`` contract (``obj_token_id`` and ``topk_ids`` are
    columns of C_r, log-probs the normalised ℓ = s - logsumexp over C_r) and its rows' statement
    scores s [rows, max |C_r|] (float64, NaN past a relation's |C_r|), which the selection stage
    ranks by (``statement_logprobs``).

    A (template, subject, C_r) that several parts ask for (a prompt in two prompt sets, e.g. the
    mined prompts in Mine, Mine-mid and Mine+Man, on the same split) is scored once: its scores are
    kept for the later parts that need them and dropped after the last. ``objects``: per part,
    the relations' objects that stand for C_r where no answer space is declared (a drawn run's,
    whose draw would otherwise shrink C_r to its own objects). ``reused``: per part, the ``(table,
    statement scores)`` files of an earlier probe of the model on the same dataset split (the seeded
    job reads the first job's): a (template, subject, relation) they hold with the same |C_r| is
    taken from them, not scored again (``earlier_statement_scores``)."""
    planned = {}
    for name, (facts, prompts) in parts.items():
        facts = in_answer_space(name, facts, answer_spaces)
        pairs = pair_facts_with_prompts(facts, prompts)
        sets = (
            candidate_sets(pairs.drop_duplicates("fact_id"), answer_spaces, (objects or {}).get(name))
            if not pairs.empty
            else {}
        )
        planned[name] = (pairs, sets)
    set_ids: dict[tuple[str, ...], int] = {}  # each distinct candidate set, by its labels

    def keys_of(pairs: pd.DataFrame, sets: dict[str, list[str]]) -> list[tuple[str, str, int]]:
        ids = {relation: set_ids.setdefault(tuple(labels), len(set_ids)) for relation, labels in sets.items()}
        return list(zip(pairs["template"], pairs["sub_label"], pairs["relation"].map(ids)))

    keys = {name: keys_of(pairs, sets) for name, (pairs, sets) in planned.items()}
    uses = Counter(key for part_keys in keys.values() for key in set(part_keys))
    kept: dict[tuple[str, str, int], np.ndarray] = {}  # scores that a later part asks for again
    for name in list(planned):
        pairs, sets = planned.pop(name)
        if pairs.empty:
            if parts[name][0].empty:  # a split asked for none (lpaqa.trex_train.source: none)
                log.info("%s: no facts in this split; the outputs are empty", name)
            else:
                log.warning("%s: no (fact, prompt) pair to probe; the outputs are empty", name)
            yield name, to_table(pa.table({column: [] for column in PROBE.columns}), PROBE), torch.empty((0, 0))
            continue
        part_keys = keys.pop(name)
        width = max(len(labels) for labels in sets.values())
        sizes = pairs["relation"].map({relation: len(labels) for relation, labels in sets.items()}).to_numpy()
        new = list(dict.fromkeys(key for key in part_keys if key not in kept))
        labels_of = {set_id: list(labels) for labels, set_id in set_ids.items()}
        earlier = {}
        if reused and reused.get(name) and new:
            # the stored tables name a row's relation, not its candidate set: each new input by both
            relation_of = dict(zip(part_keys, pairs["relation"]))
            by_input = {(t, s, relation_of[(t, s, i)]): (t, s, i) for t, s, i in new}
            sizes_wanted = {stored: len(labels_of[key[2]]) for stored, key in by_input.items()}
            stored = earlier_statement_scores(reused[name], sizes_wanted)
            earlier = {by_input[key]: values for key, values in stored.items()}
            log.info("%s: %d of %d (template, subject) inputs read from an earlier probe", name, len(earlier), len(new))
            new = [key for key in new if key not in earlier]
        statements = [
            fill_statement(template, subject, label).text
            for template, subject, set_id in new
            for label in labels_of[set_id]
        ]
        log.info(
            "%s: %d (fact, prompt) pairs, %d statements (|C_r| %d to %d, %d relations), %s model%s",
            name,
            len(pairs),
            len(statements),
            int(sizes.min()),
            int(sizes.max()),
            len(sets),
            scorer.kind,
            f"; {len(set(part_keys)) - len(new) - len(earlier)} of {len(set(part_keys))} (template, subject) inputs "
            "scored for an earlier part"
            if len(new) + len(earlier) < len(set(part_keys))
            else "",
        )
        flat = scorer.statement_logprob(statements, pll=pll) if statements else np.zeros(0)
        del statements
        found = kept | earlier
        offset = 0
        for key in new:
            found[key] = flat[offset : offset + len(labels_of[key[2]])]
            offset += len(labels_of[key[2]])
        scores = np.full((len(pairs), width), np.nan)
        gold, best, top_ids, top_values = [], [], [], []
        k = min(top_k, width)
        for row, (relation, key) in enumerate(zip(pairs["relation"], part_keys)):
            labels = sets[relation]
            values = found[key]
            scores[row, : len(labels)] = values
            ell = normalised(values[None])[0]
            column = labels.index(pairs["obj_label"].iat[row])
            order = np.argsort(-ell, kind="stable")
            gold.append((column, ell[column], int((values > values[column]).sum())))
            best.append(labels[order[0]])
            chosen = order[:k]
            top_ids.append(np.pad(chosen, (0, k - len(chosen)), constant_values=-1))
            top_values.append(np.pad(ell[chosen], (0, k - len(chosen)), constant_values=np.nan))
        for key in set(part_keys):  # keep what a later part asks for, drop the rest
            uses[key] -= 1
            if uses[key]:
                kept[key] = found[key]
            else:
                kept.pop(key, None)
        del found
        columns, gold_logprobs, ranks = (np.array(values) for values in zip(*gold))
        table = pa.Table.from_pandas(
            pairs.assign(obj_token_id=columns.astype(np.int64))[list(PROBE.columns[:9])], preserve_index=False
        )
        for column, values in [
            ("gold_logprob", pa.array(gold_logprobs.astype(np.float32))),
            ("gold_rank", pa.array(ranks.astype(np.int32))),
            ("prediction", pa.array(best, pa.string())),
            ("topk_ids", rows_as_lists(np.array(top_ids, dtype=np.int32))),
            ("topk_logprobs", rows_as_lists(np.array(top_values, dtype=np.float32))),
            ("score", pa.array(["statement"] * len(pairs), pa.string())),
        ]:
            table = table.append_column(column, values)
        yield name, to_table(table, PROBE), torch.from_numpy(scores)


def earlier_statement_scores(
    tables_and_scores: list[tuple], wanted: dict[tuple[str, str, str], int]
) -> dict[tuple[str, str, str], np.ndarray]:
    """The statement scores s over C_r that earlier probes hold for the ``wanted`` (template,
    subject, relation) inputs (each with its |C_r|), from ``(table path, scores path)`` pairs of
    the same dataset split, only the rows of those inputs: an input whose stored row covers another
    number of candidates is left out (scored again)."""
    from ..contracts import read

    found: dict[tuple[str, str, str], np.ndarray] = {}
    for table_path, scores_path in tables_and_scores:
        table = read(table_path, PROBE, columns=["relation", "template", "sub_label"])
        keys = list(zip(table["template"], table["sub_label"], table["relation"]))
        rows = np.flatnonzero([key in wanted and key not in found for key in keys])
        if not len(rows):
            continue
        for row, stored in stored_rows(scores_path, len(table), rows):
            key, size = keys[row], wanted[keys[row]]
            values = stored.numpy().astype(np.float64)
            covered = int((~np.isnan(values)).sum())
            if key not in found and covered == size and not np.isnan(values[:size]).any():
                found[key] = values[:size]
    return found


def stored_rows(path, rows_in_table: int, rows: np.ndarray) -> Iterator[tuple[int, torch.Tensor]]:
    """``(row, stored tensor)`` for the ascending ``rows`` of a probe's hidden-state (or statement
    score) file, read as a few runs of consecutive rows (a prompt's rows lie together in a table),
    the file checked against its table's ``rows_in_table`` (``open_hidden``)."""
    with open_hidden(path, rows_in_table) as handle:
        sliced = handle.get_slice("hidden")
        for run in np.split(rows, np.flatnonzero(np.diff(rows) != 1) + 1):
            block = sliced[int(run[0]) : int(run[-1]) + 1]
            for offset, row in enumerate(run.tolist()):
                yield row, block[offset]


def statement_logprobs(scores: torch.Tensor) -> np.ndarray:
    """The selection stage's ranking of a relation's rows under the statement score: the stored
    statement scores s [n, max |C_r|] cut to the relation's |C_r| (the columns that are not NaN)
    and normalised, ℓ = s - logsumexp over C_r: [n, |C_r|] float64."""
    values = scores.numpy() if isinstance(scores, torch.Tensor) else np.asarray(scores)
    if not len(values):
        return values.astype(np.float64)
    width = int((~np.isnan(values[0])).sum())
    if np.isnan(values[:, :width]).any() or (~np.isnan(values[:, width:])).any():
        raise KnowprobeError("statement scores of one relation's rows cover different candidate sets")
    return normalised(values[:, :width].astype(np.float64))


def stored_candidate_logprobs(score: str, model_dir, kind: str, scoring_settings: dict, candidates_path):
    """How the stages after the probe (selection, calibration) rank candidates from what the probe
    stored, without running the model's encoder: a statement score's rows are already scores over
    C_r (``statement_logprobs``; no model loads); a mask or next-token score's rows are hidden
    states, on which only the loaded model's LM head runs, over the candidate ids. Returns
    ``(candidate_logprobs, column_of)``: the function from stored rows to log-probs, and each
    candidate token id's column (None for the statement score, whose columns are C_r's order)."""
    if score == "statement":
        return statement_logprobs, None
    from .. import contracts, scoring

    scorer = scoring.load(model_dir, kind, scoring.ScoringSettings(**scoring_settings))
    candidate_ids = contracts.read(candidates_path, contracts.CANDIDATES)["token_id"].to_numpy()
    column_of = {int(token): column for column, token in enumerate(candidate_ids)}

    def candidate_logprobs(hidden):
        return scorer.candidate_logprobs_from_hidden(hidden, candidate_ids)

    return candidate_logprobs, column_of


def log_right_context(name: str, pairs: pd.DataFrame) -> None:
    """The next-token score's count of prompts (and pairs) whose right context it drops."""
    prompts = pairs.drop_duplicates("prompt_id")
    dropped = prompts[~prompts["template"].map(object_at_end)]
    affected = int(pairs["prompt_id"].isin(dropped["prompt_id"]).sum())
    log.info(
        "%s: %d of %d prompts have [Y] before their end; the next-token score drops their right context "
        "(%d of %d pairs)%s",
        name,
        len(dropped),
        len(prompts),
        affected,
        len(pairs),
        f", e.g. {dropped['template'].iloc[0]!r}" if len(dropped) else "",
    )


def known_inputs(tables_and_hidden: list[tuple], needed: set[str], text_of):
    """The inputs among ``needed`` that earlier probe tables hold, with their hidden states: read
    from ``(table path, hidden path)`` pairs, only the rows of those inputs (a prompt's rows lie
    together in a table, so they are read as a few runs of rows); ``text_of(template, subject)``
    the input of a row (``input_text``). None where there are none."""
    from ..contracts import read

    remaining, texts, states = set(needed), [], []
    for table_path, hidden_path in tables_and_hidden:
        table = read(table_path, PROBE, columns=["template", "sub_label"])
        filled = [text_of(t, s) for t, s in zip(table["template"], table["sub_label"])]
        wanted = np.flatnonzero([text in remaining for text in filled])
        if not len(wanted):
            continue
        for row, state in stored_rows(hidden_path, len(table), wanted):
            if filled[row] in remaining:  # each input once, from the first table that has it
                remaining.discard(filled[row])
                texts.append(filled[row])
                states.append(state)
    return (texts, torch.stack(states)) if texts else None


def rows_as_lists(matrix: np.ndarray) -> pa.ListArray:
    """The rows of a 2-D array as an Arrow list column (no Python objects per row)."""
    offsets = np.arange(0, matrix.size + 1, matrix.shape[1], dtype=np.int32)
    return pa.ListArray.from_arrays(offsets, pa.array(matrix.ravel()))
