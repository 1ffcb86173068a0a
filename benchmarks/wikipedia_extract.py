"""Speed of Wikipedia extraction and matching against raw decompression and mwparserfromhell.

    python benchmarks/wikipedia_extract.py               # 300 MB of generated XML
    python benchmarks/wikipedia_extract.py --size-mb 600

On a generated multistream dump (benchmarks/synthetic_wikipedia.py, calibrated on the real
export sample's sentences, links and bzip2 ratio per MB), one core, one run:
- raw decompression of every bzip2 stream, by rapidgzip (as extraction reads) and by Python's
  bz2 module (libbz2);
- knowprobe end to end: ``wikipedia.extract_chunk`` (decompress, parse pages, clean wikitext,
  split sentences, Parquet) then ``distant.match_sentences`` (links through redirects and sitelinks,
  Aho-Corasick name matching) against 5,000 entities and the 2,000 facts the dump's sentences name;
  and knowprobe's own work, end to end less raw decompression;
- baseline: mwparserfromhell ``parse(...).strip_code()`` of the same pages (on a sample: it is slow),
  beside knowprobe's cleaner on that sample;
- the spaCy step: sentences/s of the matched sentences through a tagger + parser pipeline of
  spaCy's default architecture, randomly initialised (no trained pipeline can be downloaded here;
  speed depends on the architecture, not the weights);
- where ../shared is present, the same on real articles: the pages of LPAQA's real export sample
  (6 MB of XML) repeated, page ids renumbered, into a multistream dump of the same size as the
  generated one (a 6 MB job is dominated by fixed costs: opening files, building the automaton),
  matched against the sample's 5,000 most linked targets and 2,000 random pairs of them.
"""

from __future__ import annotations

import argparse
import bz2
import json
import logging
import random
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "workflow" / "scripts"))
sys.path.insert(0, str(HERE))

import _models  # noqa: E402
import pandas as pd  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
import synthetic_wikipedia  # noqa: E402

from knowprobe.lpaqa import distant, wikipedia  # noqa: E402

FULL_WIKIPEDIA_ARTICLES = 6.9e6


def cached_dump(directory: Path, stem: str, write) -> tuple[Path, dict]:
    """A benchmark dump and what ``write(path)`` said of it (``<stem>.meta.json``), written
    unless both are there from an earlier run."""
    path = directory / f"{stem}-pages-articles-multistream.xml.bz2"
    meta = directory / f"{stem}.meta.json"
    if not (path.exists() and meta.exists()):
        start = time.perf_counter()
        info = write(path)
        meta.write_text(json.dumps(info))
        print(
            f"wrote {path.name}: {info['pages']:,} pages, {info['xml_bytes'] / 1e6:.0f} MB of XML, "
            f"{path.stat().st_size / 1e6:.0f} MB bz2, in {time.perf_counter() - start:.0f} s"
        )
    return path, json.loads(meta.read_text())


def make_dump(size_mb: int, directory: Path, pool: list[str]):
    return cached_dump(
        directory,
        f"synthetic-v{synthetic_wikipedia.VERSION}-{size_mb}MB",
        lambda path: synthetic_wikipedia.write_dump(
            path, size_mb * 1_000_000, pool, seed=size_mb, pairs=synthetic_wikipedia.fact_pairs(pool)
        ),
    )


def make_real_dump(sample: Path, size_mb: int, directory: Path):
    return cached_dump(
        directory,
        f"real-{sample.name.split('.')[0]}-{size_mb}MB",
        lambda path: write_repeated_dump(path, sample, size_mb),
    )


def write_repeated_dump(path: Path, sample: Path, size_mb: int) -> dict:
    """The real sample's pages repeated into a multistream dump of about ``size_mb`` of XML (100
    pages a stream, page ids renumbered, so every page is a distinct article to the extraction)."""
    xml = b"".join(text for _, _, text in wikipedia.iter_xml_pieces(sample, None)).decode("utf-8")
    pages = re.findall(r"[ \t]*<page>.*?</page>\n?", xml, re.S)
    if not pages:
        raise SystemExit(f"{sample}: no <page> elements")
    page_bytes = sum(len(page.encode()) for page in pages)
    repeats = max(1, round(size_mb * 1_000_000 / page_bytes))

    def renumbered():
        for page_id, page in enumerate((page for _ in range(repeats) for page in pages), start=1):
            page = re.sub(r"<id>\d+</id>", f"<id>{page_id}</id>", page, count=1)  # the page's id, before the revision's
            yield page_id, re.search(r"<title>(.*?)</title>", page).group(1), page

    index = synthetic_wikipedia.write_multistream(path, '<mediawiki xml:lang="en">\n', renumbered())
    return {
        "pages": len(pages) * repeats,
        "sample_pages": len(pages),
        "repeats": repeats,
        "xml_bytes": page_bytes * repeats,
        "index": index,
    }


def ranges_of(path: Path, index: str) -> list[tuple[int, int]]:
    return wikipedia.chunk_streams(wikipedia.read_stream_offsets(index), path.stat().st_size, 0, 1)


def raw_decompress(path: Path, ranges) -> int:
    """Bytes of XML in the dump (decompressed as extraction reads it: rapidgzip)."""
    return sum(size for _, size, _ in wikipedia.iter_xml_pieces(path, ranges))


def raw_decompress_libbz2(path: Path, ranges) -> int:
    """The same with Python's bz2 module (libbz2), for comparison."""
    size = 0
    with path.open("rb") as handle:
        if ranges is None:
            with bz2.open(handle) as xml:
                while data := xml.read(1 << 24):
                    size += len(data)
            return size
        for start, end in ranges:
            handle.seek(start)
            size += len(bz2.decompress(handle.read(end - start)))
    return size


def knowledge(pool: list[str]):
    """Entities of the generated dump (every fifth with an alias) and the facts its sentences name."""
    entities = pd.DataFrame(
        {
            "qid": [f"Q{i}" for i in range(len(pool))],
            "label": pool,
            "aliases": [[f"{n} City"] if i % 5 == 0 else [] for i, n in enumerate(pool)],
            "enwiki": pool,
        }
    )
    qid = dict(zip(pool, entities["qid"]))
    relations = ["P17", "P19", "P36", "P37"]
    facts = pd.DataFrame(
        [
            {"relation": relations[i % 4], "sub_uri": qid[a], "obj_uri": qid[b]}
            for i, (a, b) in enumerate(synthetic_wikipedia.fact_pairs(pool))
        ]
    )
    return entities, facts


def real_knowledge(sentences_path: Path, count: int = 5000, seed: int = 0):
    """Entities and facts for matching the real sample: its most linked targets, named by their
    titles, and random pairs of them (the sample comes without its Wikidata items)."""
    targets = pq.read_table(sentences_path, columns=["link_target"]).column("link_target").combine_chunks()
    titles = pd.Series(targets.flatten().to_pylist()).value_counts().index[:count].tolist()
    entities = pd.DataFrame(
        {
            "qid": [f"Q{i}" for i in range(len(titles))],
            "label": titles,
            "aliases": [[] for _ in titles],
            "enwiki": titles,
        }
    )
    rng = random.Random(seed)
    pairs = {tuple(rng.sample(range(len(titles)), 2)) for _ in range(2000)} if len(titles) > 1 else set()
    facts = pd.DataFrame(
        [{"relation": "P1", "sub_uri": f"Q{a}", "obj_uri": f"Q{b}"} for a, b in sorted(pairs)],
        columns=["relation", "sub_uri", "obj_uri"],
    )
    return entities, facts


def measure(dump: Path, ranges, workdir: Path, name: str, knowledge_of) -> tuple[dict, pd.DataFrame, dict]:
    """Raw decompression, extraction and matching of one dump, one after the other in this run;
    ``knowledge_of(sentences_path)`` gives the entities and facts to match against."""
    start = time.perf_counter()
    xml_mb = raw_decompress(dump, ranges) / 1e6
    raw_s = time.perf_counter() - start
    start = time.perf_counter()
    raw_decompress_libbz2(dump, ranges)
    libbz2_s = time.perf_counter() - start
    sentences_path, redirects_path = workdir / f"{name}-sentences.parquet", workdir / f"{name}-redirects.parquet"
    start = time.perf_counter()
    counts = wikipedia.extract_chunk(dump, ranges, sentences_path, redirects_path)
    extract_s = time.perf_counter() - start
    entities, facts = knowledge_of(sentences_path)
    start = time.perf_counter()
    matches = distant.match_sentences(
        pq.ParquetFile(sentences_path),
        facts,
        entities,  # as the rule reads
        wikipedia.read_redirects(wikipedia.resolved_redirects([redirects_path])),
    )
    match_s = time.perf_counter() - start
    counts = dict(zip(counts["what"], counts["count"]))
    total_s = extract_s + match_s
    rates = {
        "xml_mb": xml_mb,
        "raw_decompress_mb_s": xml_mb / raw_s,
        "raw_decompress_libbz2_mb_s": xml_mb / libbz2_s,
        "extract_mb_s": xml_mb / extract_s,
        "match_mb_s": xml_mb / match_s,
        "end_to_end_mb_s": xml_mb / total_s,
        "total_s": total_s,
        # what knowprobe adds to reading the dump: end to end less raw decompression
        "own_work_mb_s": xml_mb / max(total_s - raw_s, 1e-9),
        "matches": len(matches),
        "facts": len(facts),
        "entities": len(entities),
        "sentences_per_mb": counts.get("sentences", 0) / xml_mb,
        "links_per_mb": counts.get("links", 0) / xml_mb,
        "bz2_ratio": xml_mb * 1e6 / dump.stat().st_size,
    }
    return rates, matches, counts


def sample_pages(path: Path, ranges, megabytes: int) -> list[str]:
    texts, size = [], 0
    for _, _, xml in wikipedia.iter_xml_pieces(path, ranges):
        for page in wikipedia.iter_pages(xml):
            if page.redirect is None:
                texts.append(page.text)
                size += len(page.text)
        if size > megabytes * 1_000_000:
            break
    return texts


def spacy_rate(sentences: list[str]) -> float:
    nlp = _models.blank_parser()
    start = time.perf_counter()
    for _ in nlp.pipe(sentences, batch_size=256):
        pass
    return len(sentences) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=300, help="MB of XML to generate")
    parser.add_argument("--baseline-mb", type=int, default=15, help="MB of wikitext for the mwparserfromhell baseline")
    parser.add_argument(
        "--real",
        default=str(
            HERE.parent.parent / "shared/data/dumps/"
            "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
        ),
        help="a real export sample, measured too where present",
    )
    parser.add_argument("--workdir", default="benchmarks/results/wikipedia")
    parser.add_argument("--out", default="benchmarks/results/wikipedia_extract.json")
    args = parser.parse_args()
    logging.disable(logging.INFO)
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    pool = synthetic_wikipedia.entities(5000)
    dump, info = make_dump(args.size_mb, workdir, pool)
    ranges = ranges_of(dump, info["index"])

    synthetic, matches, counts = measure(dump, ranges, workdir, "synthetic", lambda _: knowledge(pool))

    texts = sample_pages(dump, ranges, args.baseline_mb)
    sample_mb = sum(len(t.encode()) for t in texts) / 1e6
    import mwparserfromhell

    start = time.perf_counter()
    for text in texts:
        mwparserfromhell.parse(text).strip_code()
    mwp_s = time.perf_counter() - start
    start = time.perf_counter()
    for text in texts:
        for _ in wikipedia.page_sentences(text):
            pass
    ours_sample_s = time.perf_counter() - start

    spacy_sentences = spacy_rate(list(matches["text"].head(5000)))
    real = Path(args.real)
    real_result = None
    if real.is_file():  # real articles: is the generated dump's mix of prose and markup like theirs?
        real_dump, real_info = make_real_dump(real, args.size_mb, workdir)
        real_result, _, _ = measure(
            real_dump, ranges_of(real_dump, real_info["index"]), workdir, "real", real_knowledge
        )
        del real_result["total_s"]
        real_result.update(
            xml_mb=round(real_result["xml_mb"]), sample_pages=real_info["sample_pages"], repeats=real_info["repeats"]
        )
    total_s = synthetic.pop("total_s")
    result = {
        **synthetic,
        "xml_mb": round(synthetic["xml_mb"]),
        "bz2_mb": round(dump.stat().st_size / 1e6),
        "pages": info["pages"],
        "articles": counts.get("articles", 0),
        "sentences": counts.get("sentences", 0),
        "end_to_end_pages_s": info["pages"] / total_s,
        "mwparserfromhell_wikitext_mb_s": sample_mb / mwp_s,
        "knowprobe_cleaner_wikitext_mb_s": sample_mb / ours_sample_s,
        "cleaner_speedup_vs_mwparserfromhell": mwp_s / ours_sample_s,
        "spacy_sentences_s": spacy_sentences,
        "projection_articles_16_cores_min": FULL_WIKIPEDIA_ARTICLES / (counts.get("articles", 1) / total_s) / 16 / 60,
        "real_articles": real_result,
    }
    print(
        f"dump: {result['xml_mb']} MB of XML ({result['bz2_mb']} MB bz2), {info['pages']:,} pages "
        f"({result['articles']:,} articles), one core"
    )
    print(
        f"raw bzip2 decompression (rapidgzip, one thread, as extraction reads): {result['raw_decompress_mb_s']:6.1f} "
        f"MB/s of XML; Python's bz2 (libbz2): {result['raw_decompress_libbz2_mb_s']:.1f}"
    )
    print(f"knowprobe extraction (decompress+clean+split+Parquet): {result['extract_mb_s']:6.1f} MB/s")
    print(
        f"knowprobe matching ({result['facts']:,} facts, {result['entities']:,} entities): "
        f"{result['match_mb_s']:6.1f} MB/s of XML"
    )
    print(
        f"knowprobe end to end:                    {result['end_to_end_mb_s']:6.1f} MB/s, "
        f"{result['end_to_end_pages_s']:,.0f} pages/s; {result['sentences']:,} sentences, {len(matches):,} matches"
    )
    print(f"knowprobe's own work (end to end less raw decompression): {result['own_work_mb_s']:6.1f} MB/s")
    print(
        f"wikitext cleaning on a {sample_mb:.0f} MB sample: mwparserfromhell strip_code "
        f"{result['mwparserfromhell_wikitext_mb_s']:.1f} MB/s, "
        f"knowprobe {result['knowprobe_cleaner_wikitext_mb_s']:.1f} MB/s "
        f"({result['cleaner_speedup_vs_mwparserfromhell']:.1f}x, knowprobe also splits sentences and keeps links)"
    )
    print(f"spaCy tagger+parser (default architecture, untrained): {spacy_sentences:,.0f} sentences/s")
    print(
        f"density: {result['sentences_per_mb']:,.0f} sentences and {result['links_per_mb']:,.0f} links per MB of XML, "
        f"bzip2 ratio {result['bz2_ratio']:.1f}"
    )
    if real_result:
        print(
            f"real articles (the export sample's {real_result['sample_pages']} pages {real_result['repeats']} times, "
            f"{real_result['xml_mb']} MB of XML, {real_result['sentences_per_mb']:,.0f} sentences "
            f"and {real_result['links_per_mb']:,.0f} links per MB, bzip2 ratio {real_result['bz2_ratio']:.1f}): "
            f"raw bzip2 {real_result['raw_decompress_mb_s']:.1f} MB/s "
            f"(libbz2 {real_result['raw_decompress_libbz2_mb_s']:.1f}), extraction {real_result['extract_mb_s']:.1f}, "
            f"matching {real_result['match_mb_s']:.1f}, end to end {real_result['end_to_end_mb_s']:.1f}, "
            f"own work {real_result['own_work_mb_s']:.1f} MB/s"
        )
    print(
        f"projection, {FULL_WIKIPEDIA_ARTICLES / 1e6:.1f} M articles at this rate on 16 cores: "
        f"{result['projection_articles_16_cores_min']:.0f} min"
    )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
