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
import io
import logging
import re
import xml.parsers.expat as expat
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..contracts import REDIRECTS, SENTENCES, PartWriter, check, close_all
from ..io import PARQUET_ROW_GROUP, KnowprobeError, progress, write_csv

log = logging.getLogger(__name__)


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


def _text_element(xml: bytes, start: int, end: int) -> int:
    """Where ``<text`` (the element, not a longer name) opens in ``xml[start:end]``, or -1."""
    while (at := xml.find(b"<text", start, end)) >= 0:
        if xml[at + 5 : at + 6] in (b" ", b">", b"/", b"\t", b"\n"):
            return at
        start = at + 5
    return -1


PAGE_REJECTS = {
    "unclosed_page": "a <page> without its </page> (the pages after it are read on)",
    "unclosed_text": "a <text> without its </text>",
    "unclosed_comment": "an <!-- in the text without its -->, which would swallow the rest of the article",
    "not_utf8": "the page's bytes are not UTF-8",
    "no_title_ns_id": "a <page> without a title, namespace or id",
}


def iter_pages(xml: bytes | str, rejects: list | None = None) -> Iterator[Page]:
    """Pages of a piece of MediaWiki export XML (UTF-8 bytes, or text) that holds whole
    ``<page>`` elements.

    Elements are found with ``bytes.find`` (the text is escaped, so ``</text>`` and ``</page>``
    cannot occur inside it); the small header before ``<text`` is decoded and searched with
    regexes. The page's text is decoded as its XML escaping is undone, in one pass (the piece is
    never decoded as a whole: that, and encoding each text again for expat, cost 1.5 ms per MB).

    A malformed page (``PAGE_REJECTS``) is appended to ``rejects`` as ``(page_id, title,
    reason)`` (-1 and "" where unknown) and skipped, the pages around it read on; without a
    ``rejects`` list it is an error."""
    if isinstance(xml, str):
        xml = xml.encode("utf-8")

    def reject(header: bytes, reason: str) -> None:
        text = header.decode("utf-8", errors="replace").split("<revision", 1)[0]
        title, page_id = _TITLE.search(text), _ID.search(text)
        row = (int(page_id.group(1)) if page_id else -1, xml_unescape_lenient(title.group(1)) if title else "", reason)
        if rejects is None:
            raise KnowprobeError(f"page {row[0]} ({row[1]}): {PAGE_REJECTS[reason]}")
        rejects.append(row)

    position = 0
    while (start := xml.find(b"<page>", position)) >= 0:
        end = xml.find(b"</page>", start)
        following = xml.find(b"<page>", start + len(b"<page>"), end if end >= 0 else len(xml))
        if end < 0 or following >= 0:  # no </page> before the next page (or the piece's end)
            reject(xml[start : start + 2000], "unclosed_page")
            if following < 0:
                return
            position = following
            continue
        position = end + len(b"</page>")
        text_at = _text_element(xml, start, end)
        header = xml[start + len(b"<page>") : text_at if text_at >= 0 else end]
        try:
            head = header.decode("utf-8")
        except UnicodeDecodeError:
            reject(header, "not_utf8")
            continue
        # the page's own elements come before its <revision>, which has an <id> of its own
        own = head.split("<revision", 1)[0]
        title, ns, page_id = _TITLE.search(own), _NS.search(own), _ID.search(own)
        if not (title and ns and page_id):
            reject(header, "no_title_ns_id")
            continue
        redirect = _REDIRECT.search(head)
        text = ""
        if text_at >= 0:
            close = xml.find(b">", text_at, end)
            if close > 0 and xml[close - 1 : close] != b"/":
                stop = xml.find(b"</text>", close, end)
                if stop < 0:
                    reject(header, "unclosed_text")
                    continue
                try:
                    text = xml_unescape(xml[close + 1 : stop])
                except UnicodeDecodeError:
                    reject(header, "not_utf8")
                    continue
                if text.rfind("<!--") > text.rfind("-->"):
                    reject(header, "unclosed_comment")
                    continue
        yield Page(
            int(page_id.group(1)),
            xml_unescape(title.group(1)),
            int(ns.group(1)),
            xml_unescape(redirect.group(1)) if redirect else None,
            text,
        )


def xml_unescape(text: bytes | str) -> str:
    """The export's XML escaping undone, one level (``&amp;lt;`` stays the wikitext ``&lt;``), and
    UTF-8 bytes decoded: by expat, which decodes entities in C (1.7 times as fast as a Python pass
    on real articles); text that is not well-formed XML character data (a bare ``&`` or ``<``) by
    a lenient Python pass."""
    raw = isinstance(text, bytes)
    if (b"&" if raw else "&") not in text:
        return text.decode("utf-8") if raw else text
    pieces: list[str] = []
    parser = expat.ParserCreate("utf-8")
    parser.buffer_text = True
    parser.buffer_size = 1 << 20
    parser.CharacterDataHandler = pieces.append
    try:
        parser.Parse(b"<t>" + text + b"</t>" if raw else "<t>" + text + "</t>", True)
    except expat.ExpatError:
        return xml_unescape_lenient(text.decode("utf-8") if raw else text)
    return "".join(pieces)


_XML_ENTITIES = {"lt": "<", "gt": ">", "quot": '"', "#039": "'", "apos": "'", "amp": "&"}


def xml_unescape_lenient(text: str) -> str:
    """``xml_unescape`` for any text: the entities MediaWiki writes are undone, anything else is
    left as it is. The text is split at each ``&`` and each piece's entity looked up (one pass)."""
    pieces = text.split("&")
    for i in range(1, len(pieces)):
        piece = pieces[i]
        end = piece.find(";", 0, 5)
        character = _XML_ENTITIES.get(piece[:end]) if end > 0 else None
        pieces[i] = "&" + piece if character is None else character + piece[end + 1 :]
    return "".join(pieces)


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


def stream_ranges(index: str | Path, dump: str | Path, chunks: int) -> list[list[tuple[int, int]]]:
    """Each chunk's byte ranges of whole streams, from the dump's multistream index. A dump cut
    short says so first; then an index that places a stream past the dump's end belongs to another
    dump, and says so."""
    truncated = truncation(dump)  # first: a cut download also leaves the index pointing past its end
    if truncated:
        raise KnowprobeError(truncated)
    offsets = read_stream_offsets(index)
    size = Path(dump).stat().st_size
    if offsets and offsets[-1] >= size:
        raise KnowprobeError(
            f"{index} does not match {dump}: it places a stream at byte {offsets[-1]:,}, past the dump's "
            f"end ({size:,} bytes); give the index published with this dump"
        )
    return [chunk_streams(offsets, size, chunk, chunks) for chunk in range(chunks)]


TAIL_BYTES = 1 << 20  # where a multistream dump's last stream (the closing </mediawiki>) begins
STREAM_START = b"BZh91AY&SY"  # a bzip2 stream's header and its first block's magic


def truncation(dump: str | Path) -> str | None:
    """Why a multistream dump is cut short, or None: a whole dump ends with a stream of its own
    holding the closing ``</mediawiki>``, which a download that broke off lacks (its bzip2 data
    ends mid-stream, or the last whole stream is a page's)."""
    dump = Path(dump)
    size = dump.stat().st_size
    with dump.open("rb") as handle:
        handle.seek(max(0, size - TAIL_BYTES))
        tail = handle.read()
    start = tail.rfind(STREAM_START)
    problem = None
    if start < 0:
        problem = "no bzip2 stream begins in its last megabyte"
    else:
        decompressor = bz2.BZ2Decompressor()
        try:
            text = decompressor.decompress(tail[start:])
        except (OSError, EOFError, ValueError):
            text = b""
        if not decompressor.eof:
            problem = "its last bzip2 stream breaks off"
        elif not text.rstrip().endswith(b"</mediawiki>"):
            problem = "its last stream is not the closing </mediawiki>"
    if problem is None:
        return None
    return (
        f"{dump} is truncated ({size:,} bytes; {problem}): download it again, whole (the dump's page "
        "lists its size and checksums)"
    )


def chunk_streams(offsets: list[int], size: int, chunk: int, chunks: int) -> list[tuple[int, int]]:
    """Byte ranges of the streams of one chunk: streams are split evenly by count."""
    bounds = offsets + [size]
    first, last = len(offsets) * chunk // chunks, len(offsets) * (chunk + 1) // chunks
    return [(bounds[i], bounds[i + 1]) for i in range(first, last)]


PIECE_BYTES = 1 << 24  # a dump without an index is read 16 MB of XML at a time


def _bunzip2(source):
    """A reader of the XML in bzip2 data: rapidgzip's decoder on one thread decompresses
    about 1.3 times as fast as libbz2 (Python's bz2) on Wikipedia dumps. Close it (``with``):
    rapidgzip aborts the interpreter at exit over a reader left open."""
    import rapidgzip

    return rapidgzip.open(source, parallelization=1)


def iter_xml_pieces(
    dump: str | Path, ranges: list[tuple[int, int]] | None, piece_bytes: int = PIECE_BYTES
) -> Iterator[tuple[int, int, bytes]]:
    """``(compressed bytes, xml bytes, xml)`` per stream of ``ranges``; when None, the whole
    dump (plain XML, or bzip2 of one or more streams, as the split part files are) in pieces of
    about ``piece_bytes`` that end after a ``</page>``, so memory stays bounded."""
    dump = Path(dump)
    if ranges is None:
        yield from _iter_whole_dump(dump, piece_bytes)
        return
    with dump.open("rb") as handle:
        for start, end in ranges:
            handle.seek(start)
            try:
                with _bunzip2(io.BytesIO(handle.read(end - start))) as stream:
                    data = stream.read()
            except Exception as error:  # rapidgzip raises plain exceptions (RuntimeError, ValueError)
                truncated = truncation(dump)
                if truncated:
                    raise KnowprobeError(truncated) from None
                raise KnowprobeError(
                    f"{dump}: corrupt bzip2 stream at byte {start} ({error}); "
                    "the dump is whole, so its multistream index does not match it"
                ) from None
            yield end - start, len(data), data


def _iter_whole_dump(dump: Path, piece_bytes: int) -> Iterator[tuple[int, int, bytes]]:
    size = dump.stat().st_size
    compressed = dump.suffix == ".bz2"
    rest, xml_bytes, reported = b"", 0, 0
    with _bunzip2(str(dump)) if compressed else dump.open("rb") as xml_file:
        while True:
            try:
                data = xml_file.read(piece_bytes)
            except Exception as error:  # rapidgzip raises plain exceptions (RuntimeError, ValueError)
                raise KnowprobeError(f"{dump}: corrupt or truncated archive ({error})") from None
            xml_bytes += len(data)
            text = rest + data
            if not data:  # the end: what is left, and the compressed bytes not yet reported
                if text or reported < size:
                    yield size - reported, xml_bytes, text
                return
            cut = text.rfind(b"</page>")
            if cut < 0:  # no whole page yet: read on
                rest = text
                continue
            cut += len(b"</page>")
            # compressed bytes read so far (rapidgzip counts bits), for the progress bar
            position = min(xml_file.tell_compressed() // 8 if compressed else xml_file.tell(), size)
            yield position - reported, xml_bytes, text[:cut]
            rest, xml_bytes, reported = text[cut:], 0, position


# --- wikitext → text with link spans -----------------------------------------------------------

_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
# a reference's or a table's body is matched up to its first closing tag by runs of a character
# class, not by a lazy ``.*?`` (which the engine steps through one character at a time: the
# references alone cost 2.5 ms per MB of XML that way, 0.2 so)
_REF = re.compile(r"<ref\b(?:[^>]*/>|[^>]*>[^<]*(?:<(?!/ref\s*>)[^<]*)*</ref\s*>)", re.I)
_BLOCK_TAGS = re.compile(
    r"<(math|gallery|timeline|syntaxhighlight|source|pre|nowiki|table|score|imagemap|chem|"
    r"graph|mapframe|references|div|blockquote|poem|code|hiero)\b[^>]*>.*?</\1\s*>",
    re.S | re.I,
)
_TAG = re.compile(r"</?[a-zA-Z][^>]*>")
_INNER_TEMPLATE = re.compile(r"\{\{[^{}]*\}\}")
_TABLE = re.compile(r"\{\|[^|]*(?:\|(?!\})[^|]*)*\|\}")
_FILE_LINK_START = re.compile(r"\[\[\s*(?:file|image|category|media)\s*:", re.I)
_BRACKETS = re.compile(r"\[\[|\]\]")
_INTERWIKI = re.compile(r"\[\[\s*:?[a-z][a-z-]{1,11}\s*:[^\[\]]*\]\]")
_EXTERNAL = re.compile(r"\[(?:https?:|ftp:)?//[^\s\]]+\s*([^\]]*)\]")
_URL = re.compile(r"https?://\S+")
_QUOTES = re.compile(r"''(?:'(?:'(?:')?)?)?")  # '{2,5}, written with a literal prefix the engine scans for fast
# left where a template filled the parentheses; a space before them goes too, but not in the
# pattern: one that can start with a space is tried at every space
_EMPTY_PARENS = re.compile(r"\(\s*[,;]?\s*\)")
_SPACE_RUN = re.compile(r"  +")
_SPACE_BEFORE_PUNCTUATION = re.compile(r" ([,.;:])")
_LINK = re.compile(r"\[\[([^\[\]|\n]+)(?:\|([^\[\]\n]*))?\]\]([a-z]*)")
# lines that are not prose: headings, table rows and other markup, magic words, blank lines
_NOT_PROSE = re.compile(r"=+.*=+\s*$|\s*(?:[|!{}]|__[A-Z]+__|$)")
_LIST = re.compile(r"^[*#:;]+\s*")
_SPACES = re.compile(r"[ \t\u00a0]+")


@functools.lru_cache(maxsize=1 << 18)  # link targets repeat across a chunk
def normalize_title(title: str) -> str:
    """A link target as MediaWiki resolves it: no section, spaces for underscores, first letter upper."""
    title = _SPACES.sub(" ", title.split("#", 1)[0].replace("_", " ")).strip()
    return title[:1].upper() + title[1:]


def holds(text: str, marker: str) -> bool:
    """``marker in text``, its first character tested first: CPython finds one character at memchr
    speed, but searches for two or more at about 1 ns a character, as slowly as a regex scans."""
    return marker[0] in text and marker in text


def strip_markup(wikitext: str) -> str:
    """Remove everything but prose and links (links are handled by ``page_text``).

    Each pass is guarded by a substring test (memchr speed) for what its pattern needs, so a
    page pays only for the constructs it holds."""
    text = wikitext
    if "<" in text:
        if "<!--" in text:  # "<" is known to be there
            text = _COMMENT.sub("", text)
        text = _REF.sub("", text)
        text = _BLOCK_TAGS.sub("", text)
    # templates nest: innermost first, until none is left (or an unbalanced one stays); a
    # substring test, not one more pass of the pattern, tells whether another round is needed
    for _ in range(10):
        if not holds(text, "{{"):
            break
        text, n = _INNER_TEMPLATE.subn("", text)
        if not n:
            break
    for _ in range(3):  # tables nest too
        if not holds(text, "{|"):
            break
        text, n = _TABLE.subn("", text)
        if not n:
            break
    if holds(text, "[["):
        text = remove_file_links(text)
        text = _INTERWIKI.sub("", text)
    if holds(text, "//"):
        text = _EXTERNAL.sub(r"\1", text)
        text = _URL.sub("", text)
    if holds(text, "''"):
        text = _QUOTES.sub("", text)
    if "<" in text:
        text = _TAG.sub("", text)
    if "(" in text:
        text = remove_empty_parentheses(text)
    # runs of spaces left by removed markup are collapsed here, before link offsets exist; then
    # no space is left before punctuation
    if "\t" in text:
        text = text.replace("\t", " ")
    if "  " in text:
        text = _SPACE_RUN.sub(" ", text)
    return _SPACE_BEFORE_PUNCTUATION.sub(r"\1", text)


def remove_empty_parentheses(text: str) -> str:
    """Drop "()", "( , )" and the like, with the one space before them."""
    pieces = _EMPTY_PARENS.split(text)
    if len(pieces) == 1:
        return text
    last = len(pieces) - 1
    return "".join(piece[:-1] if i < last and piece[-1:] == " " else piece for i, piece in enumerate(pieces))


def remove_file_links(text: str) -> str:
    """Drop [[File:…]], [[Image:…]], [[Category:…]] with their captions, however deeply links nest in them."""
    pieces, position = [], 0
    while (match := _FILE_LINK_START.search(text, position)) is not None:
        pieces.append(text[position : match.start()])
        depth, end = 1, len(text)
        for bracket in _BRACKETS.finditer(text, match.end()):
            depth += 1 if bracket.group() == "[[" else -1
            if depth == 0:
                end = bracket.end()
                break
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def page_text(wikitext: str) -> tuple[str, list[int], list[int], list[str]]:
    """An article's prose, one paragraph per line, with its links as parallel lists of start and
    end offsets in the text and normalized target titles."""
    # HTML entities (&nbsp;, &ndash;) are decoded once per page, before any offset exists
    if "&" in wikitext:
        wikitext = html.unescape(wikitext)
    lines = []
    for line in strip_markup(wikitext.replace("\u00a0", " ")).split("\n"):
        if _NOT_PROSE.match(line):
            continue
        if line[:1] in "*#:;":  # (also true for an empty line, which _NOT_PROSE has dropped)
            line = _LIST.sub("", line)
        line = line.strip()
        if line:
            lines.append(line)
    text = "\n".join(lines)
    # links are replaced on the whole page at once; _LINK cannot cross a line
    if holds(text, "[["):
        return replace_links(text)
    if holds(text, "]]"):  # stray brackets
        return _tidy(text, [], [], [])
    return text, [], [], []


def replace_links(text: str) -> tuple[str, list[int], list[int], list[str]]:
    """Links become their anchor text (with the link trail); their starts, ends and normalized
    targets in the result are returned beside it. A link whose anchor is blank leaves no span;
    stray brackets are deleted. ``text``: lines stripped, no runs of spaces."""
    # split() returns text, then (target, anchor, trail, text) per link: no match objects, and
    # the offsets come from one running sum over the lengths of the pieces
    parts = _LINK.split(text)
    targets = parts[1::4]
    anchors = [(anchor or target).strip() + trail for target, anchor, trail in zip(targets, parts[2::4], parts[3::4])]
    pieces = [""] * (2 * len(anchors) + 1)
    pieces[0::2] = parts[0::4]
    pieces[1::2] = anchors
    positions = list(accumulate(map(len, pieces), initial=0))
    starts, ends, targets = positions[1:-1:2], positions[2::2], list(map(normalize_title, targets))
    text = "".join(pieces)
    blank = "" in anchors
    if blank:
        kept = [i for i, anchor in enumerate(anchors) if anchor]
        starts, ends, targets = [starts[i] for i in kept], [ends[i] for i in kept], [targets[i] for i in kept]
    # what _tidy deletes can only be left by links: the brackets of a malformed one, or spaces
    # that a blank anchor leaves side by side or at a line's edge (the cleaner collapsed runs
    # of spaces and the lines are stripped; testing for spaces, frequent characters, would be
    # slow: 2.5 ms per MB of XML)
    if blank or holds(text, "[[") or holds(text, "]]"):
        return _tidy(text, starts, ends, targets)
    return text, starts, ends, targets


_TIDY = re.compile(r"\[\[|\]\]|(?<= ) +|^ +| +$", re.M)


def _tidy(text: str, starts: list[int], ends: list[int], targets: list[str]):
    """Delete stray link brackets and surplus spaces, moving the link offsets with the text."""
    cuts = [(m.start(), m.end()) for m in _TIDY.finditer(text)]
    cut_starts = [s for s, _ in cuts]
    before = [0]  # characters deleted by the cuts before each cut
    for s, e in cuts:
        before.append(before[-1] + e - s)

    def moved(position: int) -> int:
        k = bisect.bisect_left(cut_starts, position)  # cuts that start before position
        if k == 0:
            return position
        s, e = cuts[k - 1]
        return position - before[k - 1] - (min(position, e) - s)

    pieces, last = [], 0
    for s, e in cuts:
        pieces.append(text[last:s])
        last = e
    pieces.append(text[last:])
    links = [(moved(s), moved(e), t) for s, e, t in zip(starts, ends, targets)]
    links = [link for link in links if link[1] > link[0]]
    return "".join(pieces), [s for s, _, _ in links], [e for _, e, _ in links], [t for _, _, t in links]


ABBREVIATIONS = frozenset(
    "mr mrs ms dr st jr sr prof gen col lt sgt capt cmdr adm rev hon fr mt ft vs etc inc ltd co corp no nos vol "
    "pp fig approx est dept univ assn bros jan feb mar apr jun jul aug sep sept oct nov dec e.g i.e u.s a.d b.c "
    "ca cf al op".split()
)
# a sentence ends at a newline (a paragraph's end) or at . ! ? (with closing quotes or brackets)
# before whitespace and a capital or digit; written to start with one character class, which the
# engine scans for quickly (an alternation of the two cases is searched twice as slowly)
_SENTENCE_END = re.compile(r"[.!?\n](?:(?<=\n)|[\"'”’)\]]*([^\S\n]+)(?=[\"'“‘(\[]?[A-Z0-9]))")


def split_sentences(text: str) -> tuple[list[int], list[int]]:
    """Sentence start and end offsets of ``text`` (paragraphs separated by newlines, stripped):
    a sentence ends at a paragraph's end and at . ! ? before a capital or digit, except after an
    abbreviation or a single-letter initial ("J. R. R. Tolkien", "Dr. Smith")."""
    starts, ends, start = [], [], 0
    for match in _SENTENCE_END.finditer(text):
        end = match.start(1)  # the sentence ends before the whitespace
        if end < 0:  # a newline
            end = match.start()
        else:
            stop = match.start()
            if text[stop] == ".":
                # the word before the period, found without copying the sentence (tabs are
                # spaces by now)
                bare = text[max(text.rfind(" ", start, stop) + 1, start) : stop].rstrip(".!?").lstrip("(\"'").lower()
                if bare in ABBREVIATIONS or (len(bare) == 1 and bare.isalpha()):
                    continue
        if end > start:
            starts.append(start)
            ends.append(end)
        start = match.end()
    if start < len(text):  # lines are stripped: what is left is a sentence
        starts.append(start)
        ends.append(len(text))
    return starts, ends


def sentence_of_links(
    sentence_starts: np.ndarray, sentence_ends: np.ndarray, link_starts: np.ndarray, link_ends: np.ndarray
) -> np.ndarray:
    """For each link, the index of the sentence that holds it wholly, or -1: a link across a
    sentence boundary belongs to neither. Both sorted by start, sentences not overlapping."""
    row = np.searchsorted(sentence_starts, link_starts, side="right") - 1
    inside = row >= 0
    inside[inside] = link_ends[inside] <= sentence_ends[row[inside]]
    return np.where(inside, row, -1)


class SentenceColumns:
    """Sentences of a run of articles gathered as columns of the ``sentences`` contract (links as
    three parallel lists per sentence: character offsets in ``text`` and target titles).

    Python touches each page, each sentence boundary and each link once (mostly inside
    comprehensions and ``map``); assigning links to sentences and building the list columns
    are numpy and Arrow operations over the whole run."""

    def __init__(self):
        self.page_ids, self.titles, self.page_sentences, self.page_links, self.page_bases = [], [], [], [], []
        self.texts, self.sentence_starts, self.sentence_ends = [], [], []
        self.link_starts, self.link_ends, self.link_targets = [], [], []
        self.base = 0  # each page's offsets are shifted past those of the pages before it

    def __len__(self) -> int:
        return len(self.texts)

    def add(self, page_id: int, title: str, wikitext: str) -> None:
        text, link_starts, link_ends, link_targets = page_text(wikitext)
        starts, ends = split_sentences(text)
        self.page_ids.append(page_id)
        self.titles.append(title)
        self.page_sentences.append(len(starts))
        self.page_links.append(len(link_starts))
        self.page_bases.append(self.base)
        self.base += len(text) + 1
        self.texts.extend([text[s:e] for s, e in zip(starts, ends)])
        self.sentence_starts.extend(starts)
        self.sentence_ends.extend(ends)
        self.link_starts.extend(link_starts)
        self.link_ends.extend(link_ends)
        self.link_targets.extend(link_targets)

    def table(self) -> pa.Table:
        sentence_counts = np.array(self.page_sentences, dtype=np.int64)
        bases = np.array(self.page_bases, dtype=np.int64)
        sentence_bases = np.repeat(bases, sentence_counts)
        starts = np.array(self.sentence_starts, dtype=np.int64) + sentence_bases
        ends = np.array(self.sentence_ends, dtype=np.int64) + sentence_bases
        link_bases = np.repeat(bases, np.array(self.page_links, dtype=np.int64))
        link_starts = np.array(self.link_starts, dtype=np.int64) + link_bases
        link_ends = np.array(self.link_ends, dtype=np.int64) + link_bases
        row = sentence_of_links(starts, ends, link_starts, link_ends)
        kept = row >= 0
        row = row[kept]  # non-decreasing: links and sentences are both in text order
        offsets = np.zeros(len(self.texts) + 1, dtype=np.int32)
        np.cumsum(np.bincount(row, minlength=len(self.texts)), out=offsets[1:])
        offsets = pa.array(offsets)
        page = np.repeat(np.arange(len(self.page_ids)), sentence_counts)
        first_sentence = np.cumsum(sentence_counts) - sentence_counts
        columns = {
            "page_id": pa.array(np.array(self.page_ids, dtype=np.int64)[page]),
            "title": pa.array(self.titles, pa.string()).take(pa.array(page)),
            "sentence": pa.array((np.arange(len(self.texts)) - first_sentence[page]).astype(np.int32)),
            "text": pa.array(self.texts, pa.string()),
            "link_start": pa.ListArray.from_arrays(
                offsets, pa.array((link_starts[kept] - starts[row]).astype(np.int32))
            ),
            "link_end": pa.ListArray.from_arrays(offsets, pa.array((link_ends[kept] - starts[row]).astype(np.int32))),
            "link_target": pa.ListArray.from_arrays(
                offsets, pa.array(self.link_targets, pa.string()).filter(pa.array(kept))
            ),
        }
        return pa.table(columns, schema=SENTENCES.arrow_schema())


def page_sentences(wikitext: str) -> Iterator[tuple[str, list[tuple[int, int, str]]]]:
    """Sentences of an article with the links that lie wholly inside them (offsets in the sentence)."""
    columns = SentenceColumns()
    columns.add(0, "", wikitext)
    table = columns.table()
    for text, starts, ends, targets in zip(
        *(table.column(name).to_pylist() for name in ("text", "link_start", "link_end", "link_target"))
    ):
        yield text, list(zip(starts, ends, targets))


# --- a chunk job -------------------------------------------------------------------------------


def extract_chunk(
    dump: str | Path,
    ranges: list[tuple[int, int]] | None,
    sentences_out: str | Path,
    redirects_out: str | Path,
    namespaces: tuple[int, ...] = (0,),
    rejects_out: str | Path | None = None,
) -> pd.DataFrame:
    """Sentences and redirects of one chunk; returns counts of what was read and skipped. Malformed
    pages are skipped and listed (``page_id, title, reason``) in ``rejects_out``."""
    counts: Counter[str] = Counter()
    rejected: list[tuple[int, str, str]] = []
    sentences = PartWriter(sentences_out, SENTENCES, dictionary=("title", "link_target"))
    redirects = PartWriter(redirects_out, REDIRECTS)
    ok = False
    total = sum(end - start for start, end in ranges) if ranges is not None else Path(dump).stat().st_size
    # the loop allocates millions of small lists and tuples and creates no reference cycles;
    # the cyclic collector would rescan the buffered row groups again and again for nothing
    collecting = gc.isenabled()
    gc.disable()
    articles = SentenceColumns()

    def write_articles():
        nonlocal articles
        table = articles.table()
        counts["sentences"] += table.num_rows
        counts["links"] += len(pc.list_flatten(table.column("link_target")))
        sentences.write(table)
        articles = SentenceColumns()

    try:
        with progress(total=total, unit="B", unit_scale=True, desc="extract") as bar:
            for compressed, size, xml in iter_xml_pieces(dump, ranges):
                counts["xml_bytes"] += size
                for page in iter_pages(xml, rejected):
                    if page.namespace not in namespaces:
                        counts["other_namespace"] += 1
                    elif page.redirect is not None:
                        counts["redirects"] += 1
                        redirects.extend((normalize_title(page.title),), (normalize_title(page.redirect),))
                    else:
                        counts["articles"] += 1
                        articles.add(page.id, page.title, page.text)
                        if len(articles) >= PARQUET_ROW_GROUP:
                            write_articles()
                bar.update(compressed)
        write_articles()
        ok = True
    finally:
        if collecting:
            gc.enable()
        close_all([sentences, redirects], ok)  # both closed, and their parts removed, whatever failed
    counts["rejected_pages"] = len(rejected)
    if rejected:
        by_reason = Counter(reason for _, _, reason in rejected)
        log.warning("%s: %d malformed pages skipped (%s)", dump, len(rejected), dict(by_reason))
    if rejects_out is not None:
        write_csv(pd.DataFrame(rejected, columns=["page_id", "title", "reason"]), rejects_out)
    log.info("%s", ", ".join(f"{k} {v:,}" for k, v in counts.items()))
    return pd.DataFrame([{"what": k, "count": v} for k, v in counts.items()])


REDIRECT_HOPS = 5  # how many redirects a link is followed through (a loop stops there)


def resolved_redirects(parts: list[str | Path]) -> pa.Table:
    """The redirects of every extraction part in one table, each with the title its chain of
    redirects ends at (``final``, as ``resolve`` follows it): what distant supervision looks
    link targets up in. Where a title is a redirect twice, the last one counts."""
    for path in parts:
        check(path, REDIRECTS)  # contract and digest
    tables = [pq.read_table(path, columns=["title", "target"]) for path in parts]
    empty = pa.table({"title": pa.array([], pa.string()), "target": pa.array([], pa.string())})
    return resolved_redirects_of(pa.concat_tables(tables) if tables else empty)


def resolved_redirects_of(table: pa.Table) -> pa.Table:
    """``title, target`` with ``final`` beside them (``final_titles``)."""
    return table.append_column("final", final_titles(table.column("title"), table.column("target")))


def final_titles(titles, targets, hops: int = REDIRECT_HOPS) -> pa.Array:
    """Each title followed through the redirects ``titles`` → ``targets``, ``hops`` steps at most
    (``resolve`` on every title at once, with Arrow hash lookups instead of a Python dict)."""
    titles, targets = pa.chunked_array(titles).combine_chunks(), pa.chunked_array(targets).combine_chunks()
    # the dict that resolve reads keeps the last of a repeated title: look up in reverse order
    keys, values = titles[::-1], targets[::-1]
    current = titles
    for _ in range(hops):
        found = pc.index_in(current, value_set=keys)
        following = pc.take(values, found)  # null where current is no redirect
        moves = pc.and_(pc.is_valid(following), pc.not_equal(following, current))
        current = pc.if_else(pc.fill_null(moves, False), following, current)
    return current


def read_redirects(source: str | Path | pa.Table, titles=None) -> dict[str, str]:
    """Redirect title → the title its chain ends at, from the gathered redirects (the file of
    ``resolved_redirects``'s table, or the table); with ``titles``, only the redirects that end at
    one of them or are one of them (a sitelink may name a redirect): all that finding those
    titles needs."""
    import pyarrow.dataset as ds

    condition = None
    if titles is not None:
        wanted = pa.array(sorted(set(titles)), pa.string())
        condition = pc.field("final").isin(wanted) | pc.field("title").isin(wanted)
    dataset = ds.dataset(source) if isinstance(source, pa.Table) else ds.dataset(str(source))
    table = dataset.to_table(columns=["title", "final"], filter=condition)
    return dict(zip(table.column("title").to_pylist(), table.column("final").to_pylist()))


def resolve(title: str, redirects: dict[str, str], hops: int = REDIRECT_HOPS) -> str:
    """Follow redirects (a chain of at most ``hops``; a loop stops there): the reference that
    ``final_titles`` computes for whole tables."""
    for _ in range(hops):
        target = redirects.get(title)
        if target is None or target == title:
            return title
        title = target
    return title
