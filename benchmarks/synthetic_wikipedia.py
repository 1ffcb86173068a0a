"""Synthetic English Wikipedia multistream dumps with realistic wikitext, for benchmarks.

Articles mix what real ones hold: an infobox with nested templates, prose paragraphs whose
sentences carry links (plain, piped, with trails), references with citation templates,
headings, a table, a file with a linked caption, lists, categories and interlanguage links;
about a tenth of the pages are redirects. Article sizes are long-tailed (median ~5 kB, mean ~7 kB of
wikitext). Entities are invented names, with facts between them, so that distant supervision
finds matches as it would on real text.
"""

from __future__ import annotations

import bz2
import random
from pathlib import Path
from xml.sax.saxutils import escape

SYLLABLES = ["ka", "lo", "ver", "an", "ti", "mo", "ra", "sen", "dor", "ul", "bri", "no", "sta", "el", "qui", "zan"]
FILLER = ("the of and in to was is for on as with by at from his her their which that this after during "
          "population river city region government century early later built known founded north south "
          "members largest economy culture history period university school church market station").split()
BOLD = "'" * 3  # wikitext bold
PATTERNS = [
    "{a} is the capital of [[{b}]].", "[[{a}]] was born in [[{b}|the town of {b}]] in {year}.",
    "The official language of {a} is [[{b} language|{b}]].", "{a} is located in [[{b}]], near the [[{c}]] border.",
    "In {year}, {a} moved to [[{b}]] where {f1} {f2} {f3}.", "{a}'s [[{b}]]s were {f1} {f2} {f3} {f4}.",
    "{f1} {f2} {f3} [[{a}]] {f4} {f5} {f6} {f7} {f8}.", "It is {f1} {f2} of [[{a}]] and {f3} {f4} [[{b}]].",
]


def name(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))).title()


def entities(count: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    names = set()
    while len(names) < count:
        names.add(name(rng))
    return sorted(names)


def sentence(rng: random.Random, pool: list[str]) -> str:
    a, b, c = rng.sample(pool, 3)
    filler = {f"f{i}": rng.choice(FILLER) for i in range(1, 9)}
    return rng.choice(PATTERNS).format(a=a, b=b, c=c, year=rng.randint(1500, 2020), **filler)


def article(rng: random.Random, title: str, pool: list[str]) -> str:
    size = min(rng.lognormvariate(0.0, 0.8), 10.0)
    # wikitext's braces, written plainly rather than escaped inside f-strings
    parts = ["{{Infobox settlement|name=" + title + "|country=[[" + rng.choice(pool) + "]]|population={{formatnum:"
             + str(rng.randint(1000, 9999999)) + "}}|coordinates={{coord|" + str(rng.randint(0, 89)) + "|N|"
             + str(rng.randint(0, 179)) + "|E}}}}"]
    parts.append(BOLD + title + BOLD + " ({{lang-de|" + title + "}}) " + sentence(rng, pool))
    for section in range(max(2, int(6 * size))):
        parts.append(f"\n== {rng.choice(FILLER).title()} ==\n")
        if rng.random() < 0.3:
            parts.append(f"[[File:{title} {section}.jpg|thumb|The [[{rng.choice(pool)}]] in {rng.randint(1900, 2020)}]]\n")
        paragraph = []
        for _ in range(rng.randint(4, 12)):
            paragraph.append(sentence(rng, pool))
            if rng.random() < 0.35:
                paragraph.append('<ref name="r' + str(rng.randint(1, 99)) + '">{{cite book|last=' + name(rng)
                                 + "|title=" + rng.choice(FILLER) + " " + rng.choice(FILLER) + "|year="
                                 + str(rng.randint(1950, 2020)) + "|page=" + str(rng.randint(1, 500)) + "}}</ref>")
        parts.append(" ".join(paragraph) + "\n")
        if rng.random() < 0.2:
            parts.append("{| class=\"wikitable\"\n|-\n! Year !! Value\n" +
                         "".join(f"|-\n| {rng.randint(1900, 2020)} || [[{rng.choice(pool)}]]\n" for _ in range(5)) + "|}\n")
        if rng.random() < 0.3:
            parts.append("".join(f"* [[{rng.choice(pool)}]] {rng.choice(FILLER)} {rng.choice(FILLER)}\n" for _ in range(4)))
    parts.append("\n== References ==\n{{reflist}}\n")
    parts.append("".join(f"[[Category:{rng.choice(FILLER).title()} of {rng.choice(pool)}]]\n" for _ in range(3)))
    parts.append(f"[[de:{title}]]\n[[fr:{title}]]\n")
    return "".join(parts)


def write_dump(path: str | Path, target_bytes: int, pool: list[str], seed: int = 0, level: int = 1) -> dict:
    """A multistream dump of about ``target_bytes`` of XML (100 pages a stream) and its index."""
    path = Path(path)
    rng = random.Random(seed)
    header = "<mediawiki xml:lang=\"en\">\n  <siteinfo><sitename>Wikipedia</sitename></siteinfo>\n"
    index, xml_bytes, page_id, pages, articles = [], len(header), 0, [], 0
    with path.open("wb") as out:
        out.write(bz2.compress(header.encode(), level))
        while xml_bytes < target_bytes:
            page_id += 1
            title = rng.choice(pool) if rng.random() < 0.5 else f"{name(rng)} {page_id}"
            if rng.random() < 0.1:
                body, redirect = f"#REDIRECT [[{rng.choice(pool)}]]", True
            else:
                body, redirect = article(rng, title, pool), False
                articles += 1
            xml = (f"  <page>\n    <title>{escape(title)}</title>\n    <ns>0</ns>\n    <id>{page_id}</id>\n"
                   + (f"    <redirect title=\"{escape(body[12:-2])}\" />\n" if redirect else "")
                   + f"    <revision>\n      <id>{page_id}</id>\n      <text xml:space=\"preserve\">{escape(body)}"
                     f"</text>\n    </revision>\n  </page>\n")
            pages.append((page_id, title, xml))
            xml_bytes += len(xml.encode())
            if len(pages) == 100:
                _flush(out, pages, index, level)
        if pages:
            _flush(out, pages, index, level)
        out.write(bz2.compress(b"</mediawiki>\n", level))
    index_path = path.with_name(path.name.replace(".xml.bz2", "-index.txt.bz2"))
    index_path.write_bytes(bz2.compress(("\n".join(index) + "\n").encode(), 9))
    return {"pages": page_id, "articles": articles, "xml_bytes": xml_bytes, "index": str(index_path)}


def _flush(out, pages, index, level) -> None:
    """One bzip2 stream of the buffered pages, and their index lines."""
    offset = out.tell()
    index.extend(f"{offset}:{pid}:{title}" for pid, title, _ in pages)
    out.write(bz2.compress("".join(xml for _, _, xml in pages).encode(), level))
    pages.clear()
