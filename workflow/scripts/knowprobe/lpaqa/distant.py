"""Distant supervision: sentences that mention both the subject and the object of a training fact.

Mentions come from two sources: links, whose target title is resolved through redirects and
mapped to a Wikidata item by its enwiki sitelink (``how = link``), and exact matches of the
English (or ``mul``) labels and aliases of the entities of the training facts (a year, the object
of a date, is its own name), found with one
Aho-Corasick automaton over all names at once (``how = label`` or ``alias``). Name matching is
what finds a page's own entity, which its article never links to. A name match must sit on word
boundaries; where a link and a name match overlap, the link wins. An entity of the facts that the
Wikidata dump lacks is named by the facts' own label (``with_fact_labels``).

The work is done a batch of sentences at a time and in columns: links are flattened with
Arrow and each distinct target resolved once; names are found by one automaton pass over the
UTF-8 bytes of the batch's text column as they lie in memory, whose hits go straight into numpy,
where the word-boundary test is done; mentions, the link-over-name rule and the pairing with
facts are table operations (pandas merges).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from itertools import chain

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..contracts import MATCHES

log = logging.getLogger(__name__)

MIN_NAME_LENGTH = 2


class NameMatcher:
    """All occurrences of the names of a set of entities, on word boundaries."""

    def __init__(self, entities: pd.DataFrame, qids: set[str]):
        import ahocorasick_rs

        names: dict[str, set[tuple[str, str]]] = defaultdict(set)
        for row in entities[entities["qid"].isin(qids)].itertuples():
            labels = [row.label] if isinstance(row.label, str) else []
            aliases = list(row.aliases) if row.aliases is not None else []
            for name, how in [(label, "label") for label in labels] + [(alias, "alias") for alias in aliases]:
                if len(name) >= MIN_NAME_LENGTH:
                    names[name].add((row.qid, how))
        ordered = sorted(names.items())
        # each name's owners, as rows of a small table the hits index into by the name's number
        self.owners = pd.DataFrame(
            [(number, qid, how) for number, (_, owners) in enumerate(ordered) for qid, how in sorted(owners)],
            columns=["name", "qid", "how"],
        )
        # the names as UTF-8 bytes: the automaton runs over the bytes of an Arrow text column as
        # they lie in memory (three times as fast as over a Python string, and no string is made)
        self.automaton = ahocorasick_rs.BytesAhoCorasick([name.encode() for name, _ in ordered]) if names else None

    def hits(self, texts: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Rows, starts, ends (character offsets in the row's text) and name numbers of every
        name occurrence in the strings ``texts`` that sits on word boundaries."""
        none = np.zeros(0, np.int64)
        data, bounds = utf8_buffer(texts)
        if self.automaton is None or not len(data):
            return none, none, none, none
        # every occurrence, overlapping ones too, flattened into numpy without a Python loop
        found = np.fromiter(
            chain.from_iterable(self.automaton.find_matches_as_indexes(data, overlapping=True)), dtype=np.int64
        ).reshape(-1, 3)
        names, starts, ends = found[:, 0], found[:, 1], found[:, 2]
        rows = np.searchsorted(bounds, starts, side="right") - 1
        # the texts lie back to back: an occurrence must end in its own row, and a row's edges are
        # word boundaries; elsewhere no letter or digit may sit just before the start or at the end
        first, last = bounds[rows], bounds[rows + 1]
        inside = ends <= last
        before = np.flatnonzero(inside & (starts > first))
        after = np.flatnonzero(inside & (ends < last))
        inside[before[alnum_at(data, starts[before] - 1, ending=True)]] = False
        inside[after[alnum_at(data, ends[after], ending=False)]] = False
        rows, starts, ends, names = rows[inside], starts[inside], ends[inside], names[inside]
        if data.max(initial=0) >= 0x80:  # byte offsets to character offsets: less the continuation bytes before
            continuation = np.flatnonzero((data & 0xC0) == 0x80)
            first = bounds[rows] - np.searchsorted(continuation, bounds[rows])
            starts, ends = starts - np.searchsorted(continuation, starts), ends - np.searchsorted(continuation, ends)
        else:
            first = bounds[rows]
        return rows, starts - first, ends - first, names


def utf8_buffer(texts: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The UTF-8 bytes of an Arrow string array, back to back (no copy), and each string's start
    offset in them with the end of the last."""
    if pa.types.is_large_string(texts.type):
        offset_type = np.int64
    elif pa.types.is_string(texts.type):
        offset_type = np.int32
    else:
        raise TypeError(f"sentence texts must be an Arrow string array, not {texts.type}")
    _, offsets, data = texts.buffers()
    if offsets is None or data is None:
        return np.zeros(0, np.uint8), np.zeros(len(texts) + 1, np.int64)
    bounds = np.frombuffer(offsets, dtype=offset_type)[texts.offset : texts.offset + len(texts) + 1].astype(np.int64)
    return np.frombuffer(data, dtype=np.uint8)[bounds[0] : bounds[-1]], bounds - bounds[0]


_ASCII_ALNUM = np.array([chr(code).isalnum() for code in range(128)] + [False] * 128)


def alnum_at(data: np.ndarray, positions: np.ndarray, ending: bool) -> np.ndarray:
    """Whether the character whose UTF-8 encoding starts (or, ``ending``, ends) at each byte
    position is a letter or digit: a table for ASCII, a decode for the (rare) others."""
    result = _ASCII_ALNUM[data[positions]]
    for i in np.flatnonzero(data[positions] >= 0x80).tolist():
        at = int(positions[i])
        if ending:  # the character's last byte: its lead byte is at most three before
            result[i] = bytes(data[max(at - 3, 0) : at + 1]).decode("utf-8", "ignore")[-1:].isalnum()
        else:
            result[i] = bytes(data[at : at + 4]).decode("utf-8", "ignore")[:1].isalnum()
    return result


MENTION_COLUMNS = ["row", "start", "end", "qid", "how", "order"]


def _link_mentions(batch: pa.RecordBatch, title_to_qid: dict[str, str], redirects: dict[str, str]) -> pd.DataFrame:
    """Links whose target (through redirects: title → final title) is an entity of interest;
    each distinct target title is looked up once."""
    starts = batch.column("link_start")
    flat_starts = pc.list_flatten(starts)
    if len(flat_starts) == 0:
        return pd.DataFrame(columns=MENTION_COLUMNS)
    targets = pc.list_flatten(batch.column("link_target")).dictionary_encode()
    qid_of = np.array(
        [title_to_qid.get(redirects.get(title, title)) for title in targets.dictionary.to_pylist()], dtype=object
    )
    codes = targets.indices.to_numpy()
    keep = np.nonzero(pd.notna(qid_of)[codes])[0]
    return pd.DataFrame(
        {
            "row": pc.list_parent_indices(starts).to_numpy()[keep],
            "start": flat_starts.to_numpy()[keep],
            "end": pc.list_flatten(batch.column("link_end")).to_numpy()[keep],
            "qid": qid_of[codes[keep]],
            "how": "link",
            "order": keep,  # links come first, in text order
        }
    )


def leftmost_longest(rows: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Which hits are mentions when names overlap: scanning each row from the left, the longest
    hit at the leftmost start, then the next hit that starts at or after its end ("Clovis I", not
    the "Clovis" inside it; hits of the very same span, one name of several entities, all stay).
    Rows without overlapping hits (nearly all) are decided in bulk, the others one by one."""
    keep = np.ones(len(rows), dtype=bool)
    if len(rows) < 2:
        return keep
    order = np.lexsort((-ends, starts, rows))
    r, s, e = rows[order], starts[order], ends[order]
    same_row = np.r_[False, r[1:] == r[:-1]]
    # the furthest end of the hits before, within the row: a running maximum of row * big + end
    # (rows ascend, so an earlier row's values never win) less the row's offset
    big = int(e.max()) + 1
    running = np.maximum.accumulate(r.astype(np.int64) * big + e)
    previous_end = np.where(same_row, np.r_[-1, running[:-1]] - r.astype(np.int64) * big, -1)
    conflicted = np.unique(r[same_row & (s < previous_end)])
    for row in conflicted:
        at = np.flatnonzero(r == row)
        chosen_end, chosen_span = -1, None
        for i in at:
            if (s[i], e[i]) == chosen_span:
                continue  # the same span as the chosen hit: another owner of the name
            if s[i] >= chosen_end:
                chosen_end, chosen_span = e[i], (s[i], e[i])
            else:
                keep[order[i]] = False
    return keep


def _name_mentions(texts: pa.Array, matcher: NameMatcher, first_order: int) -> pd.DataFrame:
    """Name matches in the sentences ``texts`` (an Arrow string array), leftmost-longest where
    names overlap (``leftmost_longest``)."""
    rows, starts, ends, names = matcher.hits(texts)
    if not len(rows):
        return pd.DataFrame(columns=MENTION_COLUMNS)
    keep = leftmost_longest(rows, starts, ends)
    rows, starts, ends, names = rows[keep], starts[keep], ends[keep], names[keep]
    hits = pd.DataFrame(
        {"row": rows, "start": starts, "end": ends, "name": names, "order": first_order + np.arange(len(rows))}
    )
    return hits.merge(matcher.owners, on="name", sort=False)[MENTION_COLUMNS]


def _without_names_under_links(links: pd.DataFrame, names: pd.DataFrame) -> pd.DataFrame:
    """Name matches that overlap no link of their sentence (where both overlap, the link wins)."""
    if links.empty or names.empty:
        return names
    both = names.reset_index().merge(links[["row", "start", "end"]], on="row", suffixes=("", "_link"))
    covered = both.loc[(both["start"] < both["end_link"]) & (both["start_link"] < both["end"]), "index"]
    return names.drop(index=covered.unique())


def _pairs(mentions: pd.DataFrame, facts: pd.DataFrame) -> pd.DataFrame:
    """For each sentence and fact with both entities mentioned, the first non-overlapping
    (subject, object) pair of mentions, links before names, each in text order."""
    subjects = mentions.merge(facts, left_on="qid", right_on="sub_uri")
    pairs = subjects.merge(mentions, left_on=["row", "obj_uri"], right_on=["row", "qid"], suffixes=("_s", "_o"))
    pairs = pairs[
        (pairs["sub_uri"] != pairs["obj_uri"])
        & ~((pairs["start_s"] < pairs["end_o"]) & (pairs["start_o"] < pairs["end_s"]))
    ]
    pairs = pairs.sort_values(["row", "relation", "sub_uri", "obj_uri", "order_s", "order_o"], kind="stable")
    return pairs.drop_duplicates(["row", "relation", "sub_uri", "obj_uri"], keep="first")


def match_sentences(
    sentences, facts: pd.DataFrame, entities: pd.DataFrame, redirects: dict[str, str], batch_rows: int = 100_000
) -> pd.DataFrame:
    """Every (fact, sentence) where the sentence mentions the fact's subject and object (``MATCHES.columns``).

    ``sentences``: a DataFrame, an Arrow table or a Parquet file (``pq.ParquetFile``) with the
    sentence columns; it is processed ``batch_rows`` at a time, so memory stays flat.
    ``entities``: at least those of the facts (others are not read). ``redirects``: a redirect's
    title → the title its chain ends at (``wikipedia.read_redirects``), at least for the
    redirects that end at a title of the facts' entities."""
    # a date's object is a year, which has no entity: its label is its only name
    years = facts.loc[facts["obj_uri"].str.fullmatch(r"[0-9]+"), "obj_uri"].drop_duplicates()
    if len(years):
        entities = pd.concat(
            [entities, pd.DataFrame({"qid": years, "label": years, "aliases": [[]] * len(years)})], ignore_index=True
        )
    facts = facts[["relation", "sub_uri", "obj_uri"]].drop_duplicates()
    qids = set(facts["sub_uri"]) | set(facts["obj_uri"])
    matcher = NameMatcher(entities, qids)
    # only the entities of the facts can be part of a match
    title_to_qid = {t: q for t, q in zip(entities["enwiki"], entities["qid"]) if isinstance(t, str) and q in qids}
    if isinstance(sentences, pq.ParquetFile):
        batches = sentences.iter_batches(batch_size=batch_rows)
    else:
        if isinstance(sentences, pd.DataFrame):
            sentences = pa.Table.from_pandas(sentences, preserve_index=False)
        batches = sentences.to_batches(max_chunksize=batch_rows)
    parts, first_row = [], 0
    for batch in batches:
        links = _link_mentions(batch, title_to_qid, redirects)
        # names come after the links in the order of preference
        first_name = int(links["order"].max()) + 1 if len(links) else 0
        names = _name_mentions(batch.column("text"), matcher, first_order=first_name)
        mentions = pd.concat([links, _without_names_under_links(links, names)], ignore_index=True)
        pairs = _pairs(mentions, facts)
        if len(pairs):
            located = batch.select(["title", "sentence", "text"]).take(pa.array(pairs["row"].to_numpy()))
            pairs = pairs.reset_index(drop=True).assign(**located.to_pandas())
            pairs["row"] += first_row
            parts.append(pairs)
        first_row += batch.num_rows
    if not parts:
        return pd.DataFrame(columns=MATCHES.columns)
    frame = pd.concat(parts, ignore_index=True).rename(
        columns={
            "start_s": "sub_start",
            "end_s": "sub_end",
            "how_s": "sub_how",
            "start_o": "obj_start",
            "end_o": "obj_end",
            "how_o": "obj_how",
        }
    )
    # input order of the sentences, then by fact: independent of batch size and of set order
    frame = frame.sort_values(["row", "relation", "sub_uri", "obj_uri"], kind="stable")
    frame[["sub_start", "sub_end", "obj_start", "obj_end"]] = frame[
        ["sub_start", "sub_end", "obj_start", "obj_end"]
    ].astype("int64")
    return frame[MATCHES.columns].reset_index(drop=True)


def knowledge_of(facts: pd.DataFrame, entities_path, redirects_path) -> tuple[pd.DataFrame, dict[str, str]]:
    """What a chunk job needs of the Wikidata and Wikipedia stages' tables for ``facts``: their
    entities (read with a filter: a full dump's hundred million entities are never all in memory,
    in each of the chunk jobs) and the redirects that lead to those entities' articles (the
    gathered ``resolved_redirects``; eleven million on the English Wikipedia)."""
    import pyarrow.dataset as ds

    from ..contracts import ENTITIES, RESOLVED_REDIRECTS, check
    from .wikipedia import read_redirects

    check(entities_path, ENTITIES)
    check(redirects_path, RESOLVED_REDIRECTS)
    qids = pa.array(sorted(set(facts["sub_uri"]) | set(facts["obj_uri"])), pa.string())
    entities = ds.dataset(str(entities_path)).to_table(filter=pc.field("qid").isin(qids)).to_pandas()
    entities = with_fact_labels(entities, facts)
    return entities, read_redirects(redirects_path, titles=entities["enwiki"].dropna())


def with_fact_labels(entities: pd.DataFrame, facts: pd.DataFrame) -> pd.DataFrame:
    """``entities`` and, for each entity of ``facts`` that the Wikidata dump does not hold, the
    label the facts give it (``label_lang = facts``; no alias, no sitelink, so found by its name
    only). Facts built from the dump are all in it; LPAQA's released T-REx-train carries its own
    labels, so that it can be mined from a Wikipedia dump beside a Wikidata dump of another date,
    or a sample of one. A label that the facts spell two ways takes the more frequent spelling."""
    known = set(entities["qid"])
    ends = [
        facts[[f"{end}_uri", f"{end}_label"]].set_axis(["qid", "label"], axis=1)
        for end in ("sub", "obj")
        if not set(facts[f"{end}_uri"]) <= known
    ]
    if not ends:
        return entities
    named = pd.concat(ends).dropna()
    named = named[~named["qid"].isin(known)]
    named = named.groupby(["qid", "label"]).size().rename("n").reset_index()
    named = named.sort_values(["qid", "n", "label"], ascending=[True, False, True]).drop_duplicates("qid")
    added = pd.DataFrame(
        {
            "qid": named["qid"].to_numpy(),
            "label": named["label"].to_numpy(),
            "label_lang": "facts",
            "aliases": [[] for _ in range(len(named))],
            "aliases_lang": None,
            "enwiki": None,
        }
    )
    log.info("%d entities of the facts are not in the Wikidata dump: named by the facts' own labels", len(added))
    return pd.concat([entities, added[entities.columns]], ignore_index=True) if len(entities) else added


def coverage(facts: pd.DataFrame, matches: pd.DataFrame) -> pd.DataFrame:
    """Per relation: T-REx-train facts, those with at least one matched sentence and their share,
    matched sentences, and how the subjects' and the objects' mentions were found."""
    keys = ["relation", "sub_uri", "obj_uri"]
    facts = facts[keys].drop_duplicates()
    found = matches[keys].drop_duplicates().assign(matched=True)
    table = facts.merge(found, on=keys, how="left").fillna({"matched": False})
    out = table.groupby("relation", sort=True).agg(facts=("matched", "size"), facts_with_sentence=("matched", "sum"))
    out["share"] = (out["facts_with_sentence"] / out["facts"]).round(4)
    out["sentences"] = matches.groupby("relation").size().reindex(out.index, fill_value=0)
    for end in ("sub", "obj"):
        counts = matches.groupby(["relation", f"{end}_how"]).size().unstack(fill_value=0)
        for how in ("link", "label", "alias"):
            column = counts[how] if how in counts else pd.Series(0, index=counts.index)
            out[f"{end}_{how}"] = column.reindex(out.index, fill_value=0).astype(int)
    return out.reset_index()
