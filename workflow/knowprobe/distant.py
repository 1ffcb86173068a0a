"""Distant supervision: sentences that mention both the subject and the object of a training fact.

Mentions come from two sources: links, whose target title is resolved through redirects and
mapped to a Wikidata item by its enwiki sitelink (``how = link``), and exact matches of the
English (or ``mul``) labels and aliases of the entities of the training facts, found with one
Aho-Corasick automaton over all names at once (``how = label`` or ``alias``). Name matching is
what finds a page's own entity, which its article never links to. A name match must sit on word
boundaries; where a link and a name match overlap, the link wins.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass

import pandas as pd

from .wikipedia import resolve

log = logging.getLogger(__name__)

MATCH_COLUMNS = ["relation", "sub_uri", "obj_uri", "title", "sentence", "text", "sub_start", "sub_end", "sub_how",
                 "obj_start", "obj_end", "obj_how"]
MIN_NAME_LENGTH = 2


@dataclass(frozen=True)
class Mention:
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
                if len(alias) >= MIN_NAME_LENGTH:
                    names[alias].add((row.qid, "alias"))
        for name, owners in names.items():
            self.automaton.add_word(name, (len(name), tuple(sorted(owners))))
        self.size = len(names)
        if names:
            self.automaton.make_automaton()

    def find(self, text: str) -> list[Mention]:
        if not self.size:
            return []
        found = []
        for last, (length, owners) in self.automaton.iter(text):
            start, end = last - length + 1, last + 1
            if (start > 0 and text[start - 1].isalnum()) or (end < len(text) and text[end].isalnum()):
                continue
            found += [Mention(start, end, qid, how) for qid, how in owners]
        return found


def link_mentions(starts, ends, targets, title_to_qid: dict[str, str], redirects: dict[str, str]) -> list[Mention]:
    mentions = []
    for start, end, target in zip(starts, ends, targets):
        qid = title_to_qid.get(resolve(target, redirects))
        if qid is not None:
            mentions.append(Mention(int(start), int(end), qid, "link"))
    return mentions


def overlaps(a: Mention, b: Mention) -> bool:
    return a.start < b.end and b.start < a.end


def sentence_mentions(text: str, links, matcher: NameMatcher, title_to_qid, redirects) -> list[Mention]:
    """Link mentions, then name matches that overlap none of them; ``links`` is (starts, ends, targets)."""
    linked = link_mentions(*links, title_to_qid, redirects) if len(links[0]) else []
    named = [m for m in matcher.find(text) if not any(overlaps(m, l) for l in linked)]
    return linked + named


def match_sentences(sentences: pd.DataFrame, facts: pd.DataFrame, entities: pd.DataFrame,
                    redirects: dict[str, str]) -> pd.DataFrame:
    """Every (fact, sentence) where the sentence mentions the fact's subject and object (``MATCH_COLUMNS``)."""
    objects_of: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for relation, sub, obj in zip(facts["relation"], facts["sub_uri"], facts["obj_uri"]):
        objects_of[sub].append((obj, relation))
    qids = set(facts["sub_uri"]) | set(facts["obj_uri"])
    matcher = NameMatcher(entities, qids)
    title_to_qid = {t: q for t, q in zip(entities["enwiki"], entities["qid"]) if isinstance(t, str)}
    rows = []
    columns = (sentences[c] for c in ("title", "sentence", "text", "link_start", "link_end", "link_target"))
    for title, number, text, starts, ends, targets in zip(*columns):
        mentions = sentence_mentions(text, (starts, ends, targets), matcher, title_to_qid, redirects)
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
                if pair is None:
                    continue
                s, o = pair
                rows.append((relation, sub, obj, title, number, text, s.start, s.end, s.how, o.start, o.end, o.how))
    return pd.DataFrame(rows, columns=MATCH_COLUMNS)
