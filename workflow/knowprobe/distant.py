"""Distant supervision: sentences that mention both the subject and the object of a training fact.

Mentions come from two sources: links, whose target title is resolved through redirects and
mapped to a Wikidata item by its enwiki sitelink (``how = link``), and exact matches of the
English (or ``mul``) labels and aliases of the entities of the training facts, found with one
Aho-Corasick automaton over all names at once (``how = label`` or ``alias``). Name matching is
what finds a page's own entity, which its article never links to. A name match must sit on word
boundaries; where a link and a name match overlap, the link wins.
"""

from __future__ import annotations

import bisect
import logging
from collections import defaultdict
from typing import Iterator, NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .wikipedia import resolve

log = logging.getLogger(__name__)

MATCH_COLUMNS = ["relation", "sub_uri", "obj_uri", "title", "sentence", "text", "sub_start", "sub_end", "sub_how",
                 "obj_start", "obj_end", "obj_how"]
MIN_NAME_LENGTH = 2


class Mention(NamedTuple):
    start: int
    end: int
    qid: str
    how: str


class NameMatcher:
    """All occurrences of the names of a set of entities in a text, on word boundaries."""

    def __init__(self, entities: pd.DataFrame, qids: set[str]):
        import ahocorasick

        self.automaton = ahocorasick.Automaton()
        names: dict[str, set[tuple[str, str]]] = defaultdict(set)
        for row in entities[entities["qid"].isin(qids)].itertuples():
            if isinstance(row.label, str) and len(row.label) >= MIN_NAME_LENGTH:
                names[row.label].add((row.qid, "label"))
            for alias in row.aliases if row.aliases is not None else ():
                if len(alias) >= MIN_NAME_LENGTH and "\n" not in alias:
                    names[alias].add((row.qid, "alias"))
        for name, owners in names.items():
            self.automaton.add_word(name, (len(name), tuple(sorted(owners))))
        self.size = len(names)
        if names:
            self.automaton.make_automaton()

    def find(self, text: str) -> Iterator[tuple[int, int, tuple[tuple[str, str], ...]]]:
        """``(start, end, owners)`` of every name occurrence on word boundaries."""
        if not self.size:
            return
        for last, (length, owners) in self.automaton.iter(text):
            start, end = last - length + 1, last + 1
            if (start > 0 and text[start - 1].isalnum()) or (end < len(text) and text[end].isalnum()):
                continue
            yield start, end, owners


def overlaps(a: Mention, b: Mention) -> bool:
    return a.start < b.end and b.start < a.end


def _link_mentions(batch: pa.RecordBatch, title_to_qid: dict[str, str], redirects: dict[str, str]):
    """Links whose target is an entity of interest, as ``{row: [Mention]}``.

    Link columns are flattened with Arrow; each distinct target title is resolved once, so
    the Python work is per distinct title and per useful link, not per link."""
    found: dict[int, list[Mention]] = defaultdict(list)
    starts = batch.column("link_start")
    if len(pc.list_flatten(starts)) == 0:
        return found
    rows = pc.list_parent_indices(starts).to_numpy()
    targets = pc.list_flatten(batch.column("link_target")).dictionary_encode()
    qid_of = [title_to_qid.get(resolve(title, redirects)) for title in targets.dictionary.to_pylist()]
    useful = np.array([q is not None for q in qid_of], dtype=bool)
    codes = targets.indices.to_numpy()
    keep = np.nonzero(useful[codes])[0]
    if not len(keep):
        return found
    flat_starts = pc.list_flatten(starts).to_numpy()[keep].tolist()
    flat_ends = pc.list_flatten(batch.column("link_end")).to_numpy()[keep].tolist()
    for row, start, end, code in zip(rows[keep].tolist(), flat_starts, flat_ends, codes[keep].tolist()):
        found[row].append(Mention(start, end, qid_of[code], "link"))
    return found


def _name_mentions(texts: list[str], matcher: NameMatcher):
    """Name matches as ``{row: [Mention]}``: one automaton pass over the batch's sentences joined
    by newlines (no name holds one), hits mapped back to their sentence."""
    found: dict[int, list[Mention]] = defaultdict(list)
    bounds, position = [], 0
    for text in texts:
        bounds.append(position)
        position += len(text) + 1
    for start, end, owners in matcher.find("\n".join(texts)):
        row = bisect.bisect_right(bounds, start) - 1
        offset = bounds[row]
        found[row] += [Mention(start - offset, end - offset, qid, how) for qid, how in owners]
    return found


def match_sentences(sentences, facts: pd.DataFrame, entities: pd.DataFrame, redirects: dict[str, str],
                    batch_rows: int = 100_000) -> pd.DataFrame:
    """Every (fact, sentence) where the sentence mentions the fact's subject and object (``MATCH_COLUMNS``).

    ``sentences``: a DataFrame, an Arrow table or an iterable of record batches with the
    sentence columns; it is processed ``batch_rows`` at a time, so memory stays flat."""
    objects_of: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for relation, sub, obj in zip(facts["relation"], facts["sub_uri"], facts["obj_uri"]):
        objects_of[sub].append((obj, relation))
    qids = set(facts["sub_uri"]) | set(facts["obj_uri"])
    matcher = NameMatcher(entities, qids)
    # only the entities of the facts can be part of a match
    title_to_qid = {t: q for t, q in zip(entities["enwiki"], entities["qid"]) if isinstance(t, str) and q in qids}
    if isinstance(sentences, pd.DataFrame):
        sentences = pa.Table.from_pandas(sentences, preserve_index=False)
    batches = sentences.to_batches(max_chunksize=batch_rows) if isinstance(sentences, pa.Table) else sentences
    rows, parts, first_row = [], [], 0
    for batch in batches:
        texts = batch.column("text").to_pylist()
        linked = _link_mentions(batch, title_to_qid, redirects)
        named = _name_mentions(texts, matcher)
        matched_rows = []
        for row in linked.keys() | named.keys():
            links = linked.get(row, [])
            mentions = links + [m for m in named.get(row, []) if not any(overlaps(m, link) for link in links)]
            if len(mentions) < 2:
                continue
            by_qid: dict[str, list[Mention]] = defaultdict(list)
            for mention in mentions:
                by_qid[mention.qid].append(mention)
            for sub in by_qid.keys() & objects_of.keys():
                for obj, relation in objects_of[sub]:
                    if obj == sub or obj not in by_qid:
                        continue
                    pair = next(((s, o) for s in by_qid[sub] for o in by_qid[obj] if not overlaps(s, o)), None)
                    if pair is not None:
                        s, o = pair
                        matched_rows.append(row)
                        rows.append((first_row + row, relation, sub, obj, s.start, s.end, s.how, o.start, o.end, o.how))
        if matched_rows:
            taken = batch.select(["title", "sentence", "text"]).take(pa.array(matched_rows, pa.int64()))
            parts.append(taken.to_pandas())
        first_row += batch.num_rows
    frame = pd.DataFrame(rows, columns=["row", "relation", "sub_uri", "obj_uri", "sub_start", "sub_end", "sub_how",
                                        "obj_start", "obj_end", "obj_how"])
    located = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["title", "sentence", "text"])
    frame = pd.concat([frame, located.reset_index(drop=True)], axis=1)
    # input order of the sentences, then by fact: independent of batch size and of set order
    frame = frame.sort_values(["row", "relation", "sub_uri", "obj_uri"], kind="stable")
    return frame[MATCH_COLUMNS].reset_index(drop=True)
