"""Synthetic English Wikipedia multistream dumps with realistic wikitext, for benchmarks.

Articles mix what real ones hold: an infobox with nested templates, prose paragraphs whose
sentences carry links (plain, piped, with trails), references with citation templates,
headings, a table, a file with a linked caption, lists, categories and interlanguage links;
about a tenth of the pages are redirects. Article sizes are long-tailed (median ~5 kB of
wikitext). Entities are invented names, and about one sentence in
ten names two that stand in a relation (``fact_pairs``), so that distant supervision finds
matches as it would on real text.

The costs of extraction and matching grow with the sentences and links per MB of XML, and
decompression's with how well the text compresses, so these are calibrated on LPAQA's real
export sample (``enwiki-...-p000000010p000030302-shortened.bz2``: 3,894 sentences of 119
characters on average and 3,704 links per MB of XML, bzip2 ratio 3.6): prose draws on a
vocabulary of 50,000 invented words with Zipf frequencies, sentences are about as long, carry
about one link, and references are full citation templates; streams are compressed at bzip2's
level 9, as the real dumps are.
"""

from __future__ import annotations

import bz2
import random
from itertools import accumulate
from pathlib import Path
from xml.sax.saxutils import escape

SYLLABLES = [
    "ka",
    "lo",
    "ver",
    "an",
    "ti",
    "mo",
    "ra",
    "sen",
    "dor",
    "ul",
    "bri",
    "no",
    "sta",
    "el",
    "qui",
    "zan",
    "pe",
    "tro",
    "mi",
    "gal",
    "fe",
    "shu",
    "ben",
    "or",
    "wi",
    "ste",
    "cal",
    "di",
    "yon",
    "re",
    "bu",
    "har",
]
FUNCTION_WORDS = (
    "the of and in to was is for on as with by at from his her their which that this after during "
    "a an it its were be had has have not but or are also been into who first one two"
).split()
BOLD = "'" * 3  # wikitext bold
VERSION = 2  # part of the benchmark dump's file name: a changed generator writes a new dump
# each sentence holds about one link; {p} is a phrase of ordinary words
PATTERNS = [
    "{a} is the capital of [[{b}]] {p}.",
    "[[{a}]] was born in [[{b}|the town of {b}]] in {year}, {p}.",
    "The official language of {a} is [[{b} language|{b}]] {p}.",
    "{a} is located in {p}, near the [[{c}]] border.",
    "In {year}, {a} moved to [[{b}]], where {p}.",
    "{p} {a} {p}.",
    "{p} [[{a}]] {p}.",
    "It is {p} of {a} and {p}.",
    "{a}'s [[{b}]]s were {p}.",
    "After {year}, {p}, and {p}.",
]


class Vocabulary:
    """Invented words drawn with Zipf frequencies (rank r has weight 1/r), as words in prose are."""

    def __init__(self, size: int = 50_000, seed: int = 1):
        rng = random.Random(seed)
        # syllables of a consonant, a vowel and maybe a consonant: as varied as English spelling
        syllables = [c + v + e for c in "bcdfghjklmnprstvwz" for v in "aeiou" for e in ("", "n", "r", "s", "t", "l")]
        words = set()
        while len(words) < size:
            words.add("".join(rng.choice(syllables) for _ in range(rng.choice((1, 2, 2, 3, 3, 4)))))
        self.words = FUNCTION_WORDS + sorted(words)
        self.cumulative = list(accumulate(1 / rank for rank in range(1, len(self.words) + 1)))

    def phrase(self, rng: random.Random, low: int, high: int) -> str:
        return " ".join(rng.choices(self.words, cum_weights=self.cumulative, k=rng.randint(low, high)))


VOCABULARY = Vocabulary()


def name(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))).title()


def entities(count: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    names = set()
    while len(names) < count:
        names.add(name(rng))
    return sorted(names)


def fact_pairs(pool: list[str], count: int = 2000, seed: int = 0) -> list[tuple[str, str]]:
    """Pairs of entities that stand in a relation: about one sentence in ten names such a pair."""
    rng = random.Random(seed)
    pairs = set()
    while len(pairs) < count:
        pairs.add(tuple(rng.sample(pool, 2)))
    return sorted(pairs)


def sentence(rng: random.Random, pool: list[str], pairs: list[tuple[str, str]] | None = None) -> str:
    a, b, c = rng.sample(pool, 3)
    if pairs and rng.random() < 0.1:
        a, b = rng.choice(pairs)
    template = rng.choice(PATTERNS)
    while "{p}" in template:  # each phrase drawn on its own
        template = template.replace("{p}", VOCABULARY.phrase(rng, 6, 15), 1)
    text = template.format(a=a, b=b, c=c, year=rng.randint(1500, 2020))
    return text[0].upper() + text[1:]


def word(rng: random.Random) -> str:
    return VOCABULARY.phrase(rng, 1, 1)


def citation(rng: random.Random) -> str:
    """A reference as real articles write them: a citation template with a URL and dates."""
    return (
        '<ref name="r'
        + str(rng.randint(1, 999))
        + '">{{cite web |url=https://www.'
        + word(rng)
        + "."
        + rng.choice(("org", "com", "gov"))
        + "/"
        + word(rng)
        + "/"
        + str(rng.randint(1000, 999999))
        + ".html |title="
        + VOCABULARY.phrase(rng, 3, 9).title()
        + " |last="
        + name(rng)
        + " |first="
        + name(rng)
        + " |work="
        + name(rng)
        + " "
        + word(rng).title()
        + " |date="
        + str(rng.randint(1, 28))
        + " "
        + rng.choice(("January", "March", "June", "October"))
        + " "
        + str(rng.randint(1990, 2020))
        + " |access-date="
        + str(rng.randint(2010, 2024))
        + "-0"
        + str(rng.randint(1, 9))
        + "-1"
        + str(rng.randint(0, 9))
        + "}}</ref>"
    )


def article(rng: random.Random, title: str, pool: list[str], pairs: list[tuple[str, str]] | None = None) -> str:
    size = min(rng.lognormvariate(0.0, 0.8), 10.0)
    # wikitext's braces, written plainly rather than escaped inside f-strings
    parts = [
        "{{Infobox settlement|name="
        + title
        + "|country=[["
        + rng.choice(pool)
        + "]]|population={{formatnum:"
        + str(rng.randint(1000, 9999999))
        + "}}|coordinates={{coord|"
        + str(rng.randint(0, 89))
        + "|N|"
        + str(rng.randint(0, 179))
        + "|E}}}}"
    ]
    parts.append(BOLD + title + BOLD + " ({{lang-de|" + title + "}}) " + sentence(rng, pool, pairs))
    for section in range(max(2, int(6 * size))):
        parts.append(f"\n== {word(rng).title()} ==\n")
        if rng.random() < 0.3:
            parts.append(
                f"[[File:{title} {section}.jpg|thumb|The [[{rng.choice(pool)}]] in {rng.randint(1900, 2020)}]]\n"
            )
        paragraph = []
        for _ in range(rng.randint(4, 12)):
            paragraph.append(sentence(rng, pool, pairs))
            if rng.random() < 0.5:
                paragraph.append(citation(rng))
        parts.append(" ".join(paragraph) + "\n")
        if rng.random() < 0.2:
            parts.append(
                '{| class="wikitable"\n|-\n! Year !! Value\n'
                + "".join(f"|-\n| {rng.randint(1900, 2020)} || [[{rng.choice(pool)}]]\n" for _ in range(5))
                + "|}\n"
            )
        if rng.random() < 0.3:
            parts.append("".join(f"* [[{rng.choice(pool)}]] {VOCABULARY.phrase(rng, 2, 6)}\n" for _ in range(4)))
    parts.append("\n== References ==\n{{reflist}}\n")
    parts.append("".join(f"[[Category:{word(rng).title()} of {rng.choice(pool)}]]\n" for _ in range(3)))
    parts.append(f"[[de:{title}]]\n[[fr:{title}]]\n")
    return "".join(parts)


def write_dump(
    path: str | Path,
    target_bytes: int,
    pool: list[str],
    seed: int = 0,
    level: int = 9,
    pairs: list[tuple[str, str]] | None = None,
) -> dict:
    """A multistream dump of about ``target_bytes`` of XML (100 pages a stream) and its index;
    ``pairs`` (from ``fact_pairs``) are the related entities that sentences name."""
    rng = random.Random(seed)
    header = '<mediawiki xml:lang="en">\n  <siteinfo><sitename>Wikipedia</sitename></siteinfo>\n'
    counts = {"pages": 0, "articles": 0, "xml_bytes": len(header)}

    def pages():
        while counts["xml_bytes"] < target_bytes:
            counts["pages"] += 1
            page_id = counts["pages"]
            title = rng.choice(pool) if rng.random() < 0.5 else f"{name(rng)} {page_id}"
            if rng.random() < 0.1:
                body, redirect = f"#REDIRECT [[{rng.choice(pool)}]]", True
            else:
                body, redirect = article(rng, title, pool, pairs), False
                counts["articles"] += 1
            xml = (
                f"  <page>\n    <title>{escape(title)}</title>\n    <ns>0</ns>\n    <id>{page_id}</id>\n"
                + (f'    <redirect title="{escape(body[12:-2])}" />\n' if redirect else "")
                + f'    <revision>\n      <id>{page_id}</id>\n      <text xml:space="preserve">{escape(body)}'
                f"</text>\n    </revision>\n  </page>\n"
            )
            counts["xml_bytes"] += len(xml.encode())
            yield page_id, title, xml

    index = write_multistream(path, header, pages(), level)
    return {**counts, "index": index}


def write_multistream(path: str | Path, header: str, pages, level: int = 9) -> str:
    """``pages`` (``(page id, title, page XML)`` in order) as a multistream dump: a header stream,
    bzip2 streams of 100 pages, a footer stream, and the index beside it (whose path is returned)."""
    path = Path(path)
    index, buffered = [], []
    with path.open("wb") as out:
        out.write(bz2.compress(header.encode(), level))
        for page in pages:
            buffered.append(page)
            if len(buffered) == 100:
                _write_stream(out, buffered, index, level)
        if buffered:
            _write_stream(out, buffered, index, level)
        out.write(bz2.compress(b"</mediawiki>\n", level))
    index_path = path.with_name(path.name.replace(".xml.bz2", "-index.txt.bz2"))
    index_path.write_bytes(bz2.compress(("\n".join(index) + "\n").encode(), 9))
    return str(index_path)


def _write_stream(out, pages, index, level) -> None:
    """One bzip2 stream of the buffered pages (``(page id, title, page XML)``), and their index lines;
    empties ``pages``."""
    offset = out.tell()
    index.extend(f"{offset}:{pid}:{title}" for pid, title, _ in pages)
    out.write(bz2.compress("".join(xml for _, _, xml in pages).encode(), level))
    pages.clear()


# --- the articles of a synthetic Wikidata world (benchmarks/rehearsal.py) --------------------------

# How an article's lead states its subject's claims, per property (any other: the generic line)
LEAD_PATTERNS = {
    "P19": ["{s} was born in {o}.", "{s} (born in {o}) is known for {p}."],
    "P20": ["{s} died in {o}.", "After {p}, {s} died in {o}."],
    "P27": ["{s} is a citizen of {o}.", "{s} holds {o} citizenship."],
    "P106": ["{s} is a {o}.", "{s} worked as a {o} for {p}."],
    "P131": ["{s} is a place in {o}.", "{s} is located in {o}, {p}."],
    "P17": ["{s} is in {o}.", "{s} lies in {o}."],
    "P31": ["{s} is a {o}.", "{s} is a {o} {p}."],
    "P279": ["{s} is a kind of {o}.", "{s} is a type of {o}."],
    "P361": ["{s} is part of {o}.", "{s} belongs to {o}."],
    "P36": ["The capital of {s} is {o}."],
    "P1412": ["{s} spoke {o}.", "{s} wrote in {o}."],
    "P108": ["{s} worked for {o}."],
    "P159": ["{s} is headquartered in {o}."],
    "P495": ["{s} comes from {o}."],
    "P136": ["{s} is known for {o} {p}."],
}
GENERIC_LEAD = ["{s} and {o} {p}.", "{s} is related to {o}."]


def world_pages(world, seed: int = 0, redirects_per_article: float = 1.6):
    """``(page id, title, page XML)`` of the articles of every item of ``world`` with an enwiki
    sitelink, and redirects to them (English Wikipedia has about 11 M redirects to its 6.9 M
    articles). An article's lead states some of its item's claims, the object linked or named,
    as Wikipedia's leads state Wikidata's facts; then a body as ``article`` writes it, whose
    sentences link other articles and (one in ten) name the two ends of one of the world's claims."""
    import numpy as np

    rng = random.Random(seed)
    articles = np.flatnonzero(world.sitelink) + 1
    titles = [world.title(int(n)) for n in articles]
    sample = np.random.default_rng(seed).choice(
        len(world.subjects), size=min(20_000, len(world.subjects)), replace=False
    )
    pairs = [(world.label(int(world.subjects[i])), world.label(int(world.objects[i]))) for i in sample]
    pool = titles if len(titles) >= 3 else titles + ["Alpha", "Beta", "Gamma"]
    page_id = 0
    for number, title in zip(articles.tolist(), titles):
        page_id += 1
        yield page_id, title, _page_xml(page_id, title, _world_article(rng, world, number, title, pool, pairs))
        while rng.random() < redirects_per_article / (1 + redirects_per_article):
            page_id += 1
            kind = rng.choice(("(disambiguation)", "City", "region", "family", "album"))
            alias = f"{world.label(number)} {kind} {page_id}"
            yield page_id, alias, _page_xml(page_id, alias, f"#REDIRECT [[{title}]]", redirect=title)


def _world_article(rng, world, number: int, title: str, pool, pairs) -> str:
    lead = []
    claims = list(world.claims_of(number).items())
    rng.shuffle(claims)
    subject = BOLD + title + BOLD
    for prop, objects in claims[:4]:
        target = objects[0]
        label = world.label(target)
        mention = f"[[{world.title(target)}|{label}]]" if world.sitelink[target - 1] and rng.random() < 0.6 else label
        pattern = rng.choice(LEAD_PATTERNS.get(prop, GENERIC_LEAD))
        text = pattern.replace("{p}", VOCABULARY.phrase(rng, 3, 8)).format(
            s=subject if not lead else world.label(number), o=mention
        )
        lead.append(text[0].upper() + text[1:])
    body = article(rng, title, pool, pairs)
    return " ".join(lead) + "\n" + body


def _page_xml(page_id: int, title: str, body: str, redirect: str | None = None) -> str:
    return (
        f"  <page>\n    <title>{escape(title)}</title>\n    <ns>0</ns>\n    <id>{page_id}</id>\n"
        + (f'    <redirect title="{escape(redirect)}" />\n' if redirect else "")
        + f'    <revision>\n      <id>{page_id}</id>\n      <text xml:space="preserve">{escape(body)}'
        f"</text>\n    </revision>\n  </page>\n"
    )


def _compressed_stream(pages: list[tuple[int, str, str]]) -> tuple[bytes, list[tuple[int, str]]]:
    return bz2.compress("".join(xml for _, _, xml in pages).encode(), 9), [(pid, title) for pid, title, _ in pages]


def write_world_dump(world, path: str | Path, processes: int = 1, seed: int = 0) -> dict:
    """The articles and redirects of ``world`` (``world_pages``) as a multistream dump of 100 pages
    a bzip2 stream and its index, the streams compressed by ``processes`` workers."""
    import multiprocessing

    path = Path(path)
    header = '<mediawiki xml:lang="en">\n  <siteinfo><sitename>Wikipedia</sitename></siteinfo>\n'
    counts = {"pages": 0, "articles": 0, "redirects": 0, "xml_bytes": len(header)}

    def streams():
        buffered = []
        for page in world_pages(world, seed):
            counts["pages"] += 1
            counts["redirects" if "#REDIRECT" in page[2] else "articles"] += 1
            counts["xml_bytes"] += len(page[2].encode())
            buffered.append(page)
            if len(buffered) == 100:
                yield buffered
                buffered = []
        if buffered:
            yield buffered

    index = []
    with path.open("wb") as out, multiprocessing.get_context("fork").Pool(processes) as pool:
        out.write(bz2.compress(header.encode(), 9))
        for data, pages in pool.imap(_compressed_stream, streams(), chunksize=4):
            offset = out.tell()
            index.extend(f"{offset}:{pid}:{title}" for pid, title in pages)
            out.write(data)
        out.write(bz2.compress(b"</mediawiki>\n", 9))
    index_path = path.with_name(path.name.replace(".xml.bz2", "-index.txt.bz2"))
    index_path.write_bytes(bz2.compress(("\n".join(index) + "\n").encode(), 9))
    return {**counts, "index": str(index_path)}
