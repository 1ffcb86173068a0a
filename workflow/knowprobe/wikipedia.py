"""Wikipedia dump → clean sentences with their links, in parallel chunks.

English Wikipedia's *multistream* dump is a concatenation of bzip2 streams of 100 pages each;
its index (``offset:page_id:title`` lines) gives each stream's byte offset, so byte ranges of
whole streams are independent chunks: a chunk job reads its range and decompresses stream by
stream. A plain ``.xml`` or single-stream ``.xml.bz2`` dump has no such boundaries and is
parsed as one chunk.

Wikitext becomes plain text by a single-purpose cleaner (no general parser: it needs only the
article prose): comments, references, templates, tables, files, categories and markup are
removed; links become their anchor text, recorded as spans with the link's target title;
headings, lists of markup and other non-prose lines are dropped; the text is split into
sentences with a rule-based splitter that knows common abbreviations and initials.
"""

from __future__ import annotations

import bisect
import bz2
import functools
import gc
import html
import logging
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from .io import KnowprobeError, ParquetPartWriter, progress

log = logging.getLogger(__name__)

# links as three parallel lists per sentence: character offsets in ``text`` and target titles
SENTENCE_SCHEMA = pa.schema([
    ("page_id", pa.int64()), ("title", pa.string()), ("sentence", pa.int32()), ("text", pa.string()),
    ("link_start", pa.list_(pa.int32())), ("link_end", pa.list_(pa.int32())), ("link_target", pa.list_(pa.string())),
])
REDIRECT_SCHEMA = pa.schema([("title", pa.string()), ("target", pa.string())])


# --- pages -----------------------------------------------------------------------------------

@dataclass
class Page:
    id: int
    title: str
    namespace: int
    redirect: str | None
    text: str


_TITLE = re.compile(r"<title>(.*?)</title>", re.S)
_NS = re.compile(r"<ns>(-?\d+)</ns>")
_ID = re.compile(r"<id>(\d+)</id>")
_REDIRECT = re.compile(r'<redirect\s+title="([^"]*)"')


def _text_element(xml: str, start: int, end: int) -> int:
    """Where ``<text`` (the element, not a longer name) opens in ``xml[start:end]``, or -1."""
    while (at := xml.find("<text", start, end)) >= 0:
        if xml[at + 5:at + 6] in (" ", ">", "/", "\t", "\n"):
            return at
        start = at + 5
    return -1


def iter_pages(xml: str) -> Iterator[Page]:
    """Pages of a piece of MediaWiki export XML that holds whole ``<page>`` elements.

    Elements are found with ``str.find`` (the text is escaped, so ``</text>`` and ``</page>``
    cannot occur inside it); the small header before ``<text`` is searched with regexes."""
    position = 0
    while (start := xml.find("<page>", position)) >= 0:
        end = xml.find("</page>", start)
        if end < 0:
            return  # an unclosed page at the end of a piece: nothing to read
        position = end + len("</page>")
        text_at = _text_element(xml, start, end)
        head = xml[start + len("<page>"):text_at if text_at >= 0 else end]
        title, ns, page_id = _TITLE.search(head), _NS.search(head), _ID.search(head)
        if not (title and ns and page_id):
            raise KnowprobeError(f"a <page> without title, ns or id near {head[:80]!r}")
        redirect = _REDIRECT.search(head)
        text = ""
        if text_at >= 0:
            close = xml.find(">", text_at, end)
            if close > 0 and xml[close - 1] != "/":
                stop = xml.find("</text>", close, end)
                text = xml[close + 1:stop] if stop >= 0 else ""
        yield Page(int(page_id.group(1)), xml_unescape(title.group(1)), int(ns.group(1)),
                   xml_unescape(redirect.group(1)) if redirect else None, xml_unescape(text))


def xml_unescape(text: str) -> str:
    """The export's XML escaping undone (MediaWiki escapes only these); &amp; last, so that
    ``&amp;lt;`` stays the wikitext ``&lt;``. Plain replaces: no Python call per entity."""
    if "&" not in text:
        return text
    return (text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&#039;", "'")
            .replace("&apos;", "'").replace("&amp;", "&"))


def read_stream_offsets(index: str | Path) -> list[int]:
    """Distinct stream offsets of a multistream index (``offset:page_id:title`` lines, bz2 or plain)."""
    index = Path(index)
    opener = bz2.open if index.suffix == ".bz2" else open
    offsets = set()
    try:
        with opener(index, "rt", encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                head, _, _ = line.partition(":")
                if not head.isdigit():
                    raise KnowprobeError(f"{index}:{number}: not an 'offset:page_id:title' line")
                offsets.add(int(head))
    except (OSError, EOFError) as error:
        raise KnowprobeError(f"{index}: unreadable multistream index ({error})") from None
    return sorted(offsets)


def chunk_streams(offsets: list[int], size: int, chunk: int, chunks: int) -> list[tuple[int, int]]:
    """Byte ranges of the streams of one chunk: streams are split evenly by count."""
    bounds = offsets + [size]
    first, last = len(offsets) * chunk // chunks, len(offsets) * (chunk + 1) // chunks
    return [(bounds[i], bounds[i + 1]) for i in range(first, last)]


def iter_xml_pieces(dump: str | Path, ranges: list[tuple[int, int]] | None) -> Iterator[tuple[int, int, str]]:
    """``(compressed bytes, xml bytes, xml text)`` per stream of ``ranges``, or of the whole dump when None."""
    dump = Path(dump)
    if ranges is None:
        opener = bz2.open if dump.suffix == ".bz2" else open
        try:
            with opener(dump, "rb") as handle:
                data = handle.read()
        except (OSError, EOFError) as error:
            raise KnowprobeError(f"{dump}: corrupt or truncated archive ({error})") from None
        yield dump.stat().st_size, len(data), data.decode("utf-8")
        return
    with dump.open("rb") as handle:
        for start, end in ranges:
            handle.seek(start)
            try:
                data = bz2.decompress(handle.read(end - start))
            except (OSError, ValueError, EOFError) as error:
                raise KnowprobeError(f"{dump}: corrupt bzip2 stream at byte {start} ({error})") from None
            yield end - start, len(data), data.decode("utf-8")


# --- wikitext → text with link spans -----------------------------------------------------------

_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_REF = re.compile(r"<ref\b[^>]*/>|<ref\b[^>]*>.*?</ref\s*>", re.S | re.I)
_BLOCK_TAGS = re.compile(r"<(math|gallery|timeline|syntaxhighlight|source|pre|nowiki|table|score|imagemap|chem|"
                         r"graph|mapframe|references|div|blockquote|poem|code|hiero)\b[^>]*>.*?</\1\s*>", re.S | re.I)
_TAG = re.compile(r"</?[a-zA-Z][^>]*>")
_INNER_TEMPLATE = re.compile(r"\{\{[^{}]*\}\}")
_TABLE = re.compile(r"\{\|.*?\|\}", re.S)
_FILE_LINK_START = re.compile(r"\[\[\s*(?:file|image|category|media)\s*:", re.I)
_BRACKETS = re.compile(r"\[\[|\]\]")
_INTERWIKI = re.compile(r"\[\[\s*:?[a-z][a-z-]{1,11}\s*:[^\[\]]*\]\]")
_EXTERNAL = re.compile(r"\[(?:https?:|ftp:)?//[^\s\]]+\s*([^\]]*)\]")
_URL = re.compile(r"https?://\S+")
_QUOTES = re.compile(r"''(?:'(?:'(?:')?)?)?")  # '{2,5}, written with a literal prefix the engine scans for fast
_EMPTY_PARENS = re.compile(r" ?\(\s*[,;]?\s*\)")  # left where a template filled the parentheses
_EMPTY_PARENS_CORE = re.compile(r"\(\s*[,;]?\s*\)")  # the same without the optional space: fast to search for
_SPACE_RUN = re.compile(r"  +")
_LINK = re.compile(r"\[\[([^\[\]|]+)(?:\|([^\[\]]*))?\]\]([a-z]*)")
_HEADING = re.compile(r"^=+.*=+\s*$")
_SKIP_LINE = re.compile(r"^\s*(?:[|!{}]|__[A-Z]+__|\s*$)")
_LIST = re.compile(r"^[*#:;]+\s*")
_SPACES = re.compile(r"[ \t\u00a0]+")


@functools.lru_cache(maxsize=1 << 18)  # link targets repeat across a chunk
def normalize_title(title: str) -> str:
    """A link target as MediaWiki resolves it: no section, spaces for underscores, first letter upper."""
    if "#" in title:
        title = title.split("#", 1)[0]
    if "_" in title:
        title = title.replace("_", " ")
    if "  " in title or "\t" in title or "\u00a0" in title:
        title = _SPACES.sub(" ", title)
    title = title.strip()
    return title[:1].upper() + title[1:]


def strip_markup(wikitext: str) -> str:
    """Remove everything but prose and links (links are handled by ``paragraphs``).

    Each pass is guarded by a substring test (memchr speed) for what its pattern needs, so a
    page pays only for the constructs it holds."""
    text = wikitext
    if "<" in text:
        if "<!--" in text:
            text = _COMMENT.sub("", text)
        text = _REF.sub("", text)
        text = _BLOCK_TAGS.sub("", text)
    if "{{" in text:
        for _ in range(10):  # templates nest; remove innermost first until none is left
            text, n = _INNER_TEMPLATE.subn("", text)
            if not n:
                break
    if "{|" in text:
        for _ in range(3):
            text, n = _TABLE.subn("", text)
            if not n:
                break
    if "[[" in text:
        text = remove_file_links(text)
        text = _INTERWIKI.sub("", text)
    if "//" in text:
        text = _EXTERNAL.sub(r"\1", text)
        text = _URL.sub("", text)
    if "''" in text:
        text = _QUOTES.sub("", text)
    if "<" in text:
        text = _TAG.sub("", text)
    if _EMPTY_PARENS_CORE.search(text):
        text = _EMPTY_PARENS.sub("", text)
    # runs of spaces left by removed markup are collapsed here, before link offsets exist; then
    # no space is left before punctuation (plain replaces: a pattern that starts with a space
    # is tried at every space)
    if "\t" in text:
        text = text.replace("\t", " ")
    if "  " in text:
        text = _SPACE_RUN.sub(" ", text)
    for punctuation in (" ,", " .", " ;", " :"):
        if punctuation in text:
            text = text.replace(punctuation, punctuation[1])
    return text


def remove_file_links(text: str) -> str:
    """Drop [[File:…]], [[Image:…]], [[Category:…]] with their captions, however deeply links nest in them."""
    pieces, position = [], 0
    while (match := _FILE_LINK_START.search(text, position)) is not None:
        pieces.append(text[position:match.start()])
        depth, end = 1, len(text)
        for bracket in _BRACKETS.finditer(text, match.end()):
            depth += 1 if bracket.group() == "[[" else -1
            if depth == 0:
                end = bracket.end()
                break
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def paragraphs(wikitext: str) -> Iterator[tuple[str, list[tuple[int, int, str]]]]:
    """Prose lines as ``(text, links)``; each link is ``(start, end, target title)`` in ``text``."""
    # HTML entities (&nbsp;, &ndash;) are decoded once per page, before any offset exists
    if "&" in wikitext:
        wikitext = html.unescape(wikitext)
    for line in strip_markup(wikitext.replace("\u00a0", " ")).split("\n"):
        if _HEADING.match(line) or _SKIP_LINE.match(line):
            continue
        if line[:1] in "*#:;":  # (also true for an empty line, which _SKIP_LINE has dropped)
            line = _LIST.sub("", line)
        line = line.strip()
        text, links = replace_links(line) if "[[" in line else (line, [])
        # what _TIDY deletes, tested with plain substring checks first: it is rare
        if "[[" in text or "]]" in text or "  " in text or text[:1] == " " or text[-1:] == " ":
            text, links = _tidy(text, links)
        if text:
            yield text, links


def replace_links(line: str) -> tuple[str, list[tuple[int, int, str]]]:
    """Links become their anchor text (with the link trail); their spans in the result and
    their normalized targets are returned beside it."""
    # split() returns text, then (target, anchor, trail, text) per link: no match objects
    parts = _LINK.split(line)
    pieces, links, position = [parts[0]], [], len(parts[0])
    for i in range(1, len(parts), 4):
        target, anchor, trail, after = parts[i], parts[i + 1], parts[i + 2], parts[i + 3]
        anchor = (anchor if anchor else target).strip() + trail
        if anchor:
            links.append((position, position + len(anchor), normalize_title(target)))
        pieces.append(anchor)
        pieces.append(after)
        position += len(anchor) + len(after)
    return "".join(pieces), links


_TIDY = re.compile(r"\[\[|\]\]|(?<= ) +|^ +| +$")


def _tidy(text: str, links):
    """Delete stray link brackets and surplus spaces, moving the link offsets with the text."""
    cuts = [(m.start(), m.end()) for m in _TIDY.finditer(text)]
    starts = [s for s, _ in cuts]
    before = [0]  # characters deleted by the cuts before each cut
    for s, e in cuts:
        before.append(before[-1] + e - s)

    def moved(position: int) -> int:
        k = bisect.bisect_left(starts, position)  # cuts that start before position
        if k == 0:
            return position
        s, e = cuts[k - 1]
        return position - before[k - 1] - (min(position, e) - s)

    pieces, last = [], 0
    for s, e in cuts:
        pieces.append(text[last:s])
        last = e
    pieces.append(text[last:])
    new_links = [(moved(s), moved(e), t) for s, e, t in links]
    return "".join(pieces), [(s, e, t) for s, e, t in new_links if e > s]


ABBREVIATIONS = frozenset(
    "mr mrs ms dr st jr sr prof gen col lt sgt capt cmdr adm rev hon fr mt ft vs etc inc ltd co corp no nos vol "
    "pp fig approx est dept univ assn bros jan feb mar apr jun jul aug sep sept oct nov dec e.g i.e u.s a.d b.c "
    "ca cf al op".split())
_BOUNDARY = re.compile(r"[.!?][\"'”’)\]]*(\s+)(?=[\"'“‘(\[]?[A-Z0-9])")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence ``(start, end)`` offsets: ends at . ! ? before a capital or digit, except after an
    abbreviation or a single-letter initial ("J. R. R. Tolkien", "Dr. Smith")."""
    spans, start = [], 0
    for match in _BOUNDARY.finditer(text):
        stop = match.start()
        if text[stop] == ".":
            # the word before the period, found without copying the sentence
            space = max(text.rfind(" ", start, stop), text.rfind("\t", start, stop))
            bare = text[max(space + 1, start):stop].rstrip(".!?").lstrip("(\"'").lower()
            if bare in ABBREVIATIONS or (len(bare) == 1 and bare.isalpha()):
                continue
        end = match.start(1)  # the sentence ends before the whitespace
        if end > start:
            spans.append((start, end))
        start = match.end()
    if text[start:].strip():
        spans.append((start, len(text.rstrip())))
    return spans


def page_sentences(wikitext: str) -> Iterator[tuple[str, list[tuple[int, int, str]]]]:
    """Sentences of an article with the links that lie wholly inside them (offsets in the sentence)."""
    for text, links in paragraphs(wikitext):
        i = 0  # links and sentences are both in text order: one pass over each
        for start, end in split_sentences(text):
            inside = []
            while i < len(links) and links[i][0] < end:
                s, e, t = links[i]
                if s >= start and e <= end:  # a link across a sentence boundary belongs to neither
                    inside.append((s - start, e - start, t))
                i += 1
            yield text[start:end], inside


# --- a chunk job -------------------------------------------------------------------------------

def extract_chunk(dump: str | Path, ranges: list[tuple[int, int]] | None, sentences_out: str | Path,
                  redirects_out: str | Path, namespaces: tuple[int, ...] = (0,)) -> pd.DataFrame:
    """Sentences and redirects of one chunk; returns counts of what was read and skipped."""
    counts: Counter[str] = Counter()
    sentences = ParquetPartWriter(sentences_out, SENTENCE_SCHEMA)
    redirects = ParquetPartWriter(redirects_out, REDIRECT_SCHEMA)
    ok = False
    total = sum(end - start for start, end in ranges) if ranges is not None else Path(dump).stat().st_size
    # the loop allocates millions of small lists and tuples and creates no reference cycles;
    # the cyclic collector would rescan the buffered row groups again and again for nothing
    collecting = gc.isenabled()
    gc.disable()
    try:
        with progress(total=total, unit="B", unit_scale=True, desc="extract") as bar:
            for compressed, size, xml in iter_xml_pieces(dump, ranges):
                counts["xml_bytes"] += size
                for page in iter_pages(xml):
                    if page.namespace not in namespaces:
                        counts["other_namespace"] += 1
                    elif page.redirect is not None:
                        counts["redirects"] += 1
                        redirects.extend((normalize_title(page.title),), (normalize_title(page.redirect),))
                    else:
                        counts["articles"] += 1
                        texts, starts, ends, targets = [], [], [], []
                        for text, spans in page_sentences(page.text):
                            texts.append(text)
                            if spans:
                                link_starts, link_ends, link_targets = zip(*spans)
                            else:
                                link_starts = link_ends = link_targets = ()
                            starts.append(link_starts)
                            ends.append(link_ends)
                            targets.append(link_targets)
                        n = len(texts)
                        counts["sentences"] += n
                        counts["links"] += sum(map(len, starts))
                        sentences.extend([page.id] * n, [page.title] * n, range(n), texts, starts, ends, targets)
                bar.update(compressed)
        ok = True
    finally:
        if collecting:
            gc.enable()
        sentences.close(ok)
        redirects.close(ok)
    log.info("%s", ", ".join(f"{k} {v:,}" for k, v in counts.items()))
    return pd.DataFrame([{"what": k, "count": v} for k, v in counts.items()])


def read_redirects(paths: list[str | Path]) -> dict[str, str]:
    frames = [pq.read_table(path).to_pandas() for path in paths]
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["title", "target"])
    return dict(zip(table["title"], table["target"]))


def resolve(title: str, redirects: dict[str, str], hops: int = 5) -> str:
    """Follow redirects (a chain of at most ``hops``; a loop stops there)."""
    for _ in range(hops):
        target = redirects.get(title)
        if target is None or target == title:
            return title
        title = target
    return title
