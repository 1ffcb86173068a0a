import bz2
import random

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from knowprobe.io import KnowprobeError
from knowprobe.lpaqa import wikipedia as wp

from conftest import require_shared


def sentences(wikitext):
    return [(text, [(text[s:e], target) for s, e, target in links]) for text, links in wp.page_sentences(wikitext)]


def test_links_piped_links_and_link_trails_become_spans():
    assert sentences("Mozart was born in [[Salzburg]], in the [[Archbishopric of Salzburg|archbishopric]].") == [
        (
            "Mozart was born in Salzburg, in the archbishopric.",
            [("Salzburg", "Salzburg"), ("archbishopric", "Archbishopric of Salzburg")],
        )
    ]
    assert sentences("He played [[violin]]s and [[piano_concerto#Mozart|concerto]]s.") == [
        ("He played violins and concertos.", [("violins", "Violin"), ("concertos", "Piano concerto")])
    ]


def test_templates_refs_comments_and_markup_are_removed():
    text = (
        "{{Infobox person|name={{nowrap|W. A. Mozart}}|birth_place=[[Salzburg]]}}\n"
        "'''Wolfgang Amadeus Mozart''' ({{IPA|ˈmoːtsaʁt}}; 27 January 1756 – 1791)<ref name=\"b\">{{cite "
        "book|title=x}}</ref> was a composer<ref>Grove</ref> of the [[Classical period (music)|Classical "
        "period]].<!-- a comment with [[Link]] -->\n"
    )
    assert sentences(text) == [
        (
            "Wolfgang Amadeus Mozart (; 27 January 1756 – 1791) was a composer of the Classical period.",
            [("Classical period", "Classical period (music)")],
        )
    ]


def test_references_holding_markup_nested_tables_and_empty_parentheses():
    # a reference body with tags and "<" in it, a "/" inside an attribute, upper-case tags; a
    # table nested in a table; parentheses emptied by templates, with the space before them
    text = (
        'Paris<ref name="a/b">{{cite web|url=http://x.org/a}} <small>p. 3</small> a < b</ref> is the '
        'capital<REF group=n/> of France<ref>x</REF >.\n{| class="wikitable"\n|-\n| {|\n| inner\n|}\n'
        "| outer cell\n|}\nIt lies ({{lang|fr|Seine}}; ) on the [[Seine]] ().\n"
    )
    assert sentences(text) == [("Paris is the capital of France.", []), ("It lies on the Seine.", [("Seine", "Seine")])]


def test_tables_files_categories_headings_and_lists():
    text = (
        "== Early life ==\n"
        "[[File:Mozart.jpg|thumb|Portrait of [[Mozart]] in [[Vienna]]]]\n"
        '{| class="wikitable"\n|-\n| [[Salzburg]] || 1756\n|}\n'
        "* He moved to [[Vienna]] in 1781.\n"
        "See [https://example.org the archive].\n"
        "[[Category:Composers]]\n[[de:Wolfgang Amadeus Mozart]]\n"
    )
    assert sentences(text) == [("He moved to Vienna in 1781.", [("Vienna", "Vienna")]), ("See the archive.", [])]


def test_sentence_splitter_keeps_abbreviations_and_initials():
    text = "J. R. R. Tolkien met Dr. Smith in the U.S. in 1920. He left! Then St. Mary's closed. 1921 was calm."
    starts, ends = wp.split_sentences(text)
    assert [text[s:e] for s, e in zip(starts, ends)] == [
        "J. R. R. Tolkien met Dr. Smith in the U.S. in 1920.",
        "He left!",
        "Then St. Mary's closed.",
        "1921 was calm.",
    ]
    # a paragraph's end ends a sentence even without a period; an empty paragraph gives none
    text = "Vienna (Austria)\n\nIt lies on the Danube. Its capital is Vienna"
    starts, ends = wp.split_sentences(text)
    assert [text[s:e] for s, e in zip(starts, ends)] == [
        "Vienna (Austria)",
        "It lies on the Danube.",
        "Its capital is Vienna",
    ]


def test_links_are_given_to_the_sentence_that_holds_them_whole():
    import numpy as np

    sentence_starts, sentence_ends = np.array([0, 20, 40]), np.array([18, 38, 60])
    link_starts, link_ends = np.array([2, 15, 20, 39, 50]), np.array([6, 25, 38, 45, 60])
    assert wp.sentence_of_links(sentence_starts, sentence_ends, link_starts, link_ends).tolist() == [0, -1, 1, -1, 2]
    # a link that spans two sentences in wikitext belongs to neither
    assert sentences("He saw [[Vienna. The city|Vienna. The city]] at night. It rained in [[Graz]].") == [
        ("He saw Vienna.", []),
        ("The city at night.", []),
        ("It rained in Graz.", [("Graz", "Graz")]),
    ]


def test_title_normalization_and_redirects():
    assert wp.normalize_title("salzburg_(city)#History") == "Salzburg (city)"
    redirects = {"Mozart": "Wolfgang Amadeus Mozart", "W. A. Mozart": "Mozart", "Loop": "Loop"}
    assert wp.resolve("W. A. Mozart", redirects) == "Wolfgang Amadeus Mozart"
    assert wp.resolve("Loop", redirects) == "Loop"
    assert wp.resolve("Vienna", redirects) == "Vienna"


def test_final_titles_follow_redirects_as_resolve_does():
    """Issue 30: the redirects are resolved once, in Arrow, when they are gathered (a Python dict
    of eleven million redirects in each distant-supervision job was the old way): chains, chains
    longer than the five hops followed, loops, self-redirects and a title redirected twice (the
    last counts, as in a dict) all end where ``resolve`` ends."""
    rng = random.Random(0)
    titles = [f"T{i}" for i in range(300)]
    pairs = [(rng.choice(titles), rng.choice(titles)) for _ in range(400)]
    pairs += [(f"C{i}", f"C{i + 1}") for i in range(8)] + [("L1", "L2"), ("L2", "L1"), ("S", "S")]
    table = pa.table({"title": [a for a, _ in pairs], "target": [b for _, b in pairs]})
    redirects = dict(pairs)
    resolved = wp.resolved_redirects_of(table)
    expected = [wp.resolve(title, redirects) for title, _ in pairs]
    assert resolved.column("final").to_pylist() == expected
    assert wp.resolve("C0", redirects) == "C5" and wp.resolve("L1", redirects) == "L2"
    # a job reads the redirects that end at the titles it looks for, or are one of them
    wanted = {"T3", "C5", "S"}
    subset = wp.read_redirects(resolved, titles=wanted)
    assert subset == {t: f for t, f in zip(table["title"].to_pylist(), expected) if f in wanted or t in wanted}
    for title in [*titles, "C0", "C3", "L1", "S", "Vienna"]:
        if wp.resolve(title, redirects) in wanted:
            assert subset.get(title, title) == wp.resolve(title, redirects)


PAGE = """  <page>
    <title>{title}</title>
    <ns>{ns}</ns>
    <id>{id}</id>{redirect}
    <revision>
      <id>9{id}</id>
      <text bytes="10" xml:space="preserve">{text}</text>
    </revision>
  </page>
"""


def page(id, title, text="", ns=0, redirect=None):
    return PAGE.format(
        id=id, title=title, ns=ns, text=text, redirect=f'\n    <redirect title="{redirect}" />' if redirect else ""
    )


def test_pages_xml_entities_and_redirects():
    xml = (
        "<mediawiki><siteinfo><sitename>Wikipedia</sitename></siteinfo>\n"
        + page(1, "Mozart", "'''Mozart''' was born in [[Salzburg]] &amp; died in [[Vienna]]. &lt;ref&gt;x&lt;/ref&gt;")
        + page(2, "W. A. Mozart", "#REDIRECT [[Mozart]]", redirect="Mozart")
        + page(3, "Talk:Mozart", "chat", ns=1)
        + "</mediawiki>"
    )
    pages = list(wp.iter_pages(xml))
    assert [(p.id, p.title, p.namespace, p.redirect) for p in pages] == [
        (1, "Mozart", 0, None),
        (2, "W. A. Mozart", 0, "Mozart"),
        (3, "Talk:Mozart", 1, None),
    ]
    assert pages[0].text.startswith("'''Mozart''' was born in [[Salzburg]] & died")
    assert sentences(pages[0].text) == [
        ("Mozart was born in Salzburg & died in Vienna.", [("Salzburg", "Salzburg"), ("Vienna", "Vienna")])
    ]


def test_xml_unescape_undoes_one_level_of_the_exports_escaping():
    assert wp.xml_unescape("a &lt;b&gt; &quot;c&quot; d&#039;s &apos;e&apos; f &amp; g") == "a <b> \"c\" d's 'e' f & g"
    # the wikitext's own entities stay for the cleaner; unknown or unterminated ones stay as they are
    assert wp.xml_unescape("&amp;lt;ref&amp;gt; &amp;nbsp; &foo; &lt &;x &") == "&lt;ref&gt; &nbsp; &foo; &lt &;x &"
    # well-formed text goes through expat, which knows every character reference; the rest is
    # done leniently, unknown entities and bare ampersands left as they are
    assert wp.xml_unescape("caf&#233; &#x41; &amp;amp;") == "café A &amp;"
    assert wp.xml_unescape("caf&#233; &foo;") == "caf&#233; &foo;"


def write_multistream(path, pages_per_stream, pages):
    """A multistream dump and its index, as Wikimedia writes them (header and footer streams too)."""
    streams = [b"<mediawiki>\n  <siteinfo><sitename>Wikipedia</sitename></siteinfo>\n"]
    titles = [[]]
    for start in range(0, len(pages), pages_per_stream):
        group = pages[start : start + pages_per_stream]
        streams.append("".join(page(*p) for p in group).encode())
        titles.append([(p[0], p[1]) for p in group])
    streams.append(b"</mediawiki>\n")
    titles.append([])
    data, index, offset = b"", [], 0
    for stream, group in zip(streams, titles):
        compressed = bz2.compress(stream)
        index += [f"{offset}:{pid}:{title}" for pid, title in group]
        data += compressed
        offset += len(compressed)
    path.write_bytes(data)
    index_path = path.with_name(path.name.replace(".xml.bz2", "-index.txt.bz2"))
    index_path.write_bytes(bz2.compress(("\n".join(index) + "\n").encode()))
    return index_path


def test_chunks_of_streams_cover_every_page_once(tmp_path):
    pages = [(i, f"Page {i}", f"Sentence one of page {i} links [[Page {i + 1}]]. Sentence two.") for i in range(1, 41)]
    pages.append((99, "Old name", "#REDIRECT [[Page 1]]", 0, "Page 1"))
    dump = tmp_path / "enwiki-multistream.xml.bz2"
    index = write_multistream(dump, 3, pages)
    offsets = wp.read_stream_offsets(index)
    assert len(offsets) == 14  # 14 streams of pages; the header stream is not indexed
    size = dump.stat().st_size
    seen = []
    for chunk in range(4):
        counts = wp.extract_chunk(
            dump,
            wp.chunk_streams(offsets, size, chunk, 4),
            tmp_path / f"s{chunk}.parquet",
            tmp_path / f"r{chunk}.parquet",
        )
        seen.append(pq.read_table(tmp_path / f"s{chunk}.parquet").to_pandas())
        assert "articles" in set(counts["what"])
    table = pd.concat(seen, ignore_index=True)
    assert sorted(table["page_id"].unique()) == list(range(1, 41))
    assert len(table) == 80
    resolved = wp.resolved_redirects([tmp_path / f"r{c}.parquet" for c in range(4)])
    assert wp.read_redirects(resolved) == {"Old name": "Page 1"}


def test_a_dump_without_index_is_read_in_bounded_pieces(tmp_path):
    """Plain XML, one bzip2 stream (a split part file) or several streams: read a piece at a
    time, each ending after a whole page, with the same pages as the dump read at once."""
    pages = [
        (
            i,
            f"Städte {i}",
            f"Sentence {i} of [[Page {i + 1}]]. Ende – ja. "
            + " ".join(str((i * 7919 + k * 104729) % 1000003) for k in range(600)),
        )
        for i in range(1, 61)
    ]
    xml = "<mediawiki>\n" + "".join(page(*p) for p in pages) + "</mediawiki>\n"
    plain, single = tmp_path / "part.xml", tmp_path / "part.xml.bz2"
    plain.write_text(xml, encoding="utf-8")
    single.write_bytes(bz2.compress(xml.encode(), 1))  # bzip2 blocks of 100 kB: bzip2 yields a block at a time
    several = tmp_path / "several.xml.bz2"
    write_multistream(several, 7, pages)
    expected = [(p.id, p.title, p.text) for p in wp.iter_pages(xml)]
    for dump in (plain, single, several):
        pieces = list(wp.iter_xml_pieces(dump, None, piece_bytes=20_000))
        assert len(pieces) >= 3 and max(len(text) for _, _, text in pieces) < 250_000
        assert all(text.rstrip().endswith((b"</page>", b"</mediawiki>")) for _, _, text in pieces)
        assert sum(size for _, size, _ in pieces) == len(
            bz2.decompress(dump.read_bytes()) if dump.suffix == ".bz2" else dump.read_bytes()
        )
        assert sum(compressed for compressed, _, _ in pieces) == dump.stat().st_size
        assert [(p.id, p.title, p.text) for _, _, text in pieces for p in wp.iter_pages(text)] == expected
    single.write_bytes(bz2.compress(xml.encode(), 1)[:-30])
    with pytest.raises(KnowprobeError, match=r"part.xml.bz2: corrupt or truncated archive"):
        list(wp.iter_xml_pieces(single, None, piece_bytes=20_000))


def test_malformed_pages_are_counted_and_the_pages_around_them_kept(tmp_path):
    """Issue 17 item 5: a page missing </page> swallowed the next article; an unclosed </text> or
    <!-- lost a page's text silently; one page that is not UTF-8 stopped its chunk."""
    good = [page(i, f"Good{i}", f"Article {i} is here.") for i in range(1, 8)]
    bad = {
        "unclosed_page": page(20, "Unclosed", "No end.").replace("</page>", ""),
        "unclosed_text": page(21, "Textless", "Cut.").replace("</text>", ""),
        "unclosed_comment": page(22, "Commented", "Seen. &lt;!-- never closed"),
        "not_utf8": page(23, "Latin", "caf\x00 &amp; more"),
        "not_utf8 ": page(24, "Latin2", "caf\x00"),
        "no_title_ns_id": page(25, "Untitled", "x").replace("<title>Untitled</title>", ""),
        # the revision's <id> must not stand in for the page's
        "no_page_id": page(26, "Idless", "x").replace("<id>26</id>", "", 1),
    }
    pieces = []
    for i, good_page in enumerate(good):
        pieces.append(good_page)
        if i < len(bad):
            pieces.append(list(bad.values())[i])
    dump = tmp_path / "part.xml"
    dump.write_bytes(("<mediawiki>\n" + "".join(pieces)).encode().replace(b"caf\x00", b"caf\xe9") + b"</mediawiki>\n")
    counts = wp.extract_chunk(
        dump, None, tmp_path / "s.parquet", tmp_path / "r.parquet", rejects_out=tmp_path / "x.csv"
    )
    counts = dict(zip(counts["what"], counts["count"]))
    assert counts["articles"] == 7 and counts["rejected_pages"] == 7
    titles = set(pd.read_parquet(tmp_path / "s.parquet")["title"])
    assert titles == {f"Good{i}" for i in range(1, 8)}  # none swallowed, none of the bad ones
    rejects = pd.read_csv(tmp_path / "x.csv")
    assert sorted(zip(rejects["page_id"], rejects["reason"])) == [
        (-1, "no_title_ns_id"),
        (20, "unclosed_page"),
        (21, "unclosed_text"),
        (22, "unclosed_comment"),
        (23, "not_utf8"),
        (24, "not_utf8"),
        (25, "no_title_ns_id"),
    ]
    assert {"Unclosed", "Idless"} <= set(rejects["title"])
    # without a rejects list, a malformed page is an error naming it
    with pytest.raises(KnowprobeError, match=r"page 21 \(Textless\): a <text> without its </text>"):
        list(wp.iter_pages(bad["unclosed_text"]))


def whole_dump(path, pages: bytes = b"<page></page>" * 50):
    """A multistream dump as Wikimedia writes one: a stream of pages, then the closing stream."""
    first = bz2.compress(b"<mediawiki>" + pages)
    path.write_bytes(first + bz2.compress(b"</mediawiki>\n"))
    return len(first)


def test_bad_index_and_corrupt_stream_are_named(tmp_path):
    index = tmp_path / "index.txt"
    index.write_text("12:1:A\nnot a line\n")
    with pytest.raises(KnowprobeError, match=r"index.txt:2: not an 'offset:page_id:title' line"):
        wp.read_stream_offsets(index)
    dump = tmp_path / "dump.xml.bz2"
    first = whole_dump(dump)
    data = bytearray(dump.read_bytes())
    data[first // 2] ^= 0xFF  # a whole dump, one of its streams corrupt
    dump.write_bytes(bytes(data))
    with pytest.raises(KnowprobeError, match=r"dump.xml.bz2: corrupt bzip2 stream at byte 0 .*index does not match"):
        list(wp.iter_xml_pieces(dump, [(0, first)]))


def test_a_truncated_dump_is_said_to_be_truncated(tmp_path):
    """Issue 27, item 11: a download that broke off was reported as an index of another dump."""
    whole = tmp_path / "whole.xml.bz2"
    first = whole_dump(whole)
    index = tmp_path / "index.txt"
    index.write_text(f"0:1:A\n{first}:2:B\n")
    assert wp.stream_ranges(index, whole, 2) == [[(0, first)], [(first, whole.stat().st_size)]]
    dump = tmp_path / "dump.xml.bz2"
    # cut inside the closing stream, right after the pages' stream, inside the pages' stream
    for cut in (whole.stat().st_size - 10, first, first - 30):
        dump.write_bytes(whole.read_bytes()[:cut])
        with pytest.raises(KnowprobeError, match=r"dump.xml.bz2 is truncated \([\d,]+ bytes; .*\): download it again"):
            wp.stream_ranges(index, dump, 2)


def test_an_index_of_another_dump_is_named_with_the_dump(tmp_path):
    dump = tmp_path / "dump.xml.bz2"
    whole_dump(dump)
    index = tmp_path / "index.txt"
    index.write_text(f"0:1:A\n{dump.stat().st_size + 500}:2:B\n")
    with pytest.raises(KnowprobeError, match=r"index.txt does not match .*dump.xml.bz2: it places a stream at byte"):
        wp.stream_ranges(index, dump, 2)
    index.write_text("0:1:A\n")
    assert wp.stream_ranges(index, dump, 1) == [[(0, dump.stat().st_size)]]


def test_real_wikipedia_export_sample(tmp_path):
    dump = require_shared("dumps", "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
    counts = wp.extract_chunk(dump, None, tmp_path / "s.parquet", tmp_path / "r.parquet")
    counts = dict(zip(counts["what"], counts["count"]))
    # 100 redirects in all, one of them in the project namespace (4), which is not article text
    assert (counts["articles"], counts["redirects"], counts["other_namespace"]) == (106, 99, 1)
    table = pq.read_table(tmp_path / "s.parquet").to_pandas()
    lincoln = table[table["title"] == "Abraham Lincoln"]
    assert len(lincoln) > 100
    assert not table["text"].str.contains(r"\{\{|\}\}|\[\[|<ref|'''", regex=True).any()
    assert sum(map(len, table["link_target"])) > 5000
    text = lincoln["text"].iloc[0]
    assert text.startswith("Abraham Lincoln")


def test_malformed_links_and_stray_spaces_keep_offsets_right():
    assert sentences("He studied at [[Berkeley|UC Berkeley] and then at [[Harvard University|Harvard]].") == [
        ("He studied at Berkeley|UC Berkeley] and then at Harvard.", [("Harvard", "Harvard University")])
    ]
    assert sentences("It lies on the [[Danube|  Danube ]]&nbsp; &nbsp;in [[Vienna]].") == [
        ("It lies on the Danube in Vienna.", [("Danube", "Danube"), ("Vienna", "Vienna")])
    ]


def test_a_link_with_a_blank_target_leaves_no_leading_space():
    assert sentences("[[ ]] Vienna lies on the [[Danube]].") == [("Vienna lies on the Danube.", [("Danube", "Danube")])]


def test_benchmark_dump_has_the_density_of_real_articles(tmp_path):
    """The benchmark's generated dump is calibrated on the real sample: its sentences, links and
    bzip2 ratio per MB of XML are within 30% of the real ones, and its facts give matches."""
    import sys
    from pathlib import Path

    from knowprobe.lpaqa import distant

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import synthetic_wikipedia

    real = require_shared("dumps", "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2")
    pool = synthetic_wikipedia.entities(500)
    pairs = synthetic_wikipedia.fact_pairs(pool, 200)
    dump = tmp_path / "synthetic-pages-articles-multistream.xml.bz2"
    info = synthetic_wikipedia.write_dump(dump, 3_000_000, pool, pairs=pairs)
    ranges = wp.chunk_streams(wp.read_stream_offsets(info["index"]), dump.stat().st_size, 0, 1)

    def density(path, ranges, xml_bytes):
        counts = wp.extract_chunk(
            path, ranges, tmp_path / f"{path.name}.s.parquet", tmp_path / f"{path.name}.r.parquet"
        )
        counts = dict(zip(counts["what"], counts["count"]))
        megabytes = xml_bytes / 1e6
        return counts["sentences"] / megabytes, counts["links"] / megabytes, xml_bytes / path.stat().st_size

    generated = density(dump, ranges, info["xml_bytes"])
    measured = density(real, None, len(bz2.decompress(real.read_bytes())))
    for what, ours, theirs in zip(("sentences/MB", "links/MB", "bzip2 ratio"), generated, measured):
        assert abs(ours / theirs - 1) < 0.3, (what, ours, theirs)
    entities = pd.DataFrame({"qid": pool, "label": pool, "aliases": [[] for _ in pool], "enwiki": pool})
    facts = pd.DataFrame([{"relation": "P1", "sub_uri": a, "obj_uri": b} for a, b in pairs])
    matches = distant.match_sentences(pq.read_table(tmp_path / f"{dump.name}.s.parquet"), facts, entities, {})
    assert len(matches) > 100
