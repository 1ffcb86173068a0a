"""Malformed records in the demo's own dumps: every one counted, no good record lost, no run
stopped (issue 17). The demo's Wikidata and Wikipedia dumps are fuzzed with eight records of each
of 29 kinds (232 in all) at seeded positions; the parse of the fuzzed dumps must count each kind
as what it is and keep every entity, claim and article of the clean parse. ``malformed_report``
gives the table (kind, injected, counted, good records lost) the closing note of issue 17 quotes:
``python -m tests.test_malformed_inputs`` prints it."""

from __future__ import annotations

import bz2
import gzip
import json
import random
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))

from knowprobe import wikidata  # noqa: E402
from knowprobe.lpaqa import wikipedia  # noqa: E402

PER_KIND = 8
PROPERTIES = ["P17", "P19", "P20", "P30", "P31", "P36", "P37", "P103", "P569"]


def entity(qid: str, label: str | None = "Fuzz", claims=None, **extra) -> dict:
    record = {"type": "item", "id": qid, "labels": {"en": {"language": "en", "value": label}} if label else {}}
    record.update(claims={} if claims is None else claims, sitelinks={}, aliases={})
    record.update(extra)
    return record


def statement(datavalue=None, snaktype="value", rank="normal") -> dict:
    snak = {"snaktype": snaktype, "property": "P31"}
    if datavalue is not None:
        snak["datavalue"] = datavalue
    return {"mainsnak": snak, "rank": rank, "type": "statement"}


def item(qid):
    return {"value": {"entity-type": "item", "id": qid}, "type": "wikibase-entityid"}


def date(time, precision):
    return {"value": {"time": time, "precision": precision}, "type": "time"}


def wikidata_bad(kind: str, n: int, good_lines: list[bytes]) -> tuple[bytes, str]:
    """A malformed (or rejected) dump line of ``kind`` and the reject kind it must be counted as."""
    qid = f"Q99{n:05d}"

    def one(claim, counted):
        return json.dumps(entity(qid, claims={"P31": [claim]})).encode(), counted

    lines = {
        "invalid UTF-8 in a label": (
            json.dumps(entity(qid, "Caf\x00")).encode().replace(b"\\u0000", b"\xe9"),
            "invalid_json",
        ),
        "nesting past the decoder's depth": (
            b'{"id": "' + qid.encode() + b'", "x": ' + b"[" * 3000 + b"]" * 3000 + b"}",
            "invalid_json",
        ),
        "line cut short": (json.dumps(entity(qid))[:40].encode(), "invalid_json"),
        "one-character garbage": (b"x", "invalid_json"),
        "an array instead of an entity": (b"[1, 2, 3]", "invalid_json"),
        "labels of the wrong type": (json.dumps(entity(qid, labels="Fuzz")).encode(), "invalid_json"),
        "id missing": (json.dumps({k: v for k, v in entity(qid).items() if k != "id"}).encode(), "no_id"),
        "id empty": (json.dumps(entity("")).encode(), "no_id"),
        "claims as a list": (json.dumps(entity(qid, claims=[statement(item("Q5"))])).encode(), "claims_not_object"),
        "entity listed twice": (good_lines[n % len(good_lines)].rstrip(b","), "duplicate_entity"),
        "novalue snak": one(statement(snaktype="novalue"), "no_value"),
        "somevalue snak": one(statement(snaktype="somevalue"), "no_value"),
        "string value": one(statement({"value": "Fuzz", "type": "string"}), "value_not_item"),
        "quantity value": one(statement({"value": {"amount": "+5"}, "type": "quantity"}), "value_not_item"),
        "deprecated claim": one(statement(item("Q5"), rank="deprecated"), "deprecated"),
        "date known to the decade": one(statement(date("+1950-00-00T00:00:00Z", 8)), "imprecise_date"),
        "date before year 1": one(statement(date("-0044-03-15T00:00:00Z", 11)), "imprecise_date"),
        "no English label": (json.dumps(entity(qid, None)).encode(), "no_english_label"),
        # a property with the number of an item of the dump: it must not displace the item
        "property with an item's number": (
            json.dumps(
                entity("P" + json.loads(good_lines[n % len(good_lines)].rstrip(b","))["id"][1:], type="property")
            ).encode(),
            "property_entity",
        ),
        "malformed entity id": (json.dumps(entity(f"Q{n}a")).encode(), "bad_id"),
        "malformed object id": one(statement(item(f"Q{n}x")), "bad_id"),
    }
    return lines[kind]


WIKIDATA_KINDS = [
    "invalid UTF-8 in a label",
    "nesting past the decoder's depth",
    "line cut short",
    "one-character garbage",
    "an array instead of an entity",
    "labels of the wrong type",
    "id missing",
    "id empty",
    "claims as a list",
    "entity listed twice",
    "novalue snak",
    "somevalue snak",
    "string value",
    "quantity value",
    "deprecated claim",
    "date known to the decade",
    "date before year 1",
    "no English label",
    "property with an item's number",
    "malformed entity id",
    "malformed object id",
]


def wikipedia_bad(kind: str, n: int) -> tuple[bytes, str]:
    page_id, title = 990000 + n, f"Fuzz page {n}"
    body = (
        f"  <page>\n    <title>{title}</title>\n    <ns>0</ns>\n    <id>{page_id}</id>\n    <revision>\n"
        f'      <id>{page_id + 1}</id>\n      <text xml:space="preserve">Fuzz text {n} is here.</text>\n'
        "    </revision>\n  </page>\n"
    ).encode()
    pages = {
        "page without </page>": (body.replace(b"</page>", b""), "unclosed_page"),
        "text without </text>": (body.replace(b"</text>", b""), "unclosed_text"),
        "comment never closed": (body.replace(b"is here.", b"is &lt;!-- here."), "unclosed_comment"),
        "text not UTF-8": (body.replace(b"is here", b"caf\xe9"), "not_utf8"),
        "title not UTF-8": (body.replace(b"Fuzz page", b"Fuzz p\xe9ge"), "not_utf8"),
        "no title": (body.replace(f"<title>{title}</title>".encode(), b""), "no_title_ns_id"),
        "no page id": (body.replace(f"<id>{page_id}</id>".encode(), b"", 1), "no_title_ns_id"),
        "no namespace": (body.replace(b"<ns>0</ns>", b""), "no_title_ns_id"),
    }
    return pages[kind]


WIKIPEDIA_KINDS = [
    "page without </page>",
    "text without </text>",
    "comment never closed",
    "text not UTF-8",
    "title not UTF-8",
    "no title",
    "no page id",
    "no namespace",
]


def parse_wikidata(lines: list[bytes], tmp: Path, name: str):
    dump = tmp / f"{name}.json"
    dump.write_bytes(b"[\n" + b",\n".join(lines) + b"\n]\n")
    rejects = wikidata.parse_chunk(
        dump, None, dump.stat().st_size, 0, 1, PROPERTIES, tmp / f"{name}.e.parquet", tmp / f"{name}.c.parquet"
    )
    _, _, dropped = wikidata.gather(
        [tmp / f"{name}.e.parquet"],
        [tmp / f"{name}.c.parquet"],
        tmp / f"{name}.entities.parquet",
        tmp / f"{name}.claims.parquet",
    )
    counts = dict(zip(rejects["kind"], rejects["count"]))
    counts.update({k: v for k, v in dropped.items() if v})
    entities = pq.read_table(tmp / f"{name}.entities.parquet").to_pandas()
    claims = pq.read_table(tmp / f"{name}.claims.parquet").to_pandas()
    return counts, entities, claims


def parse_wikipedia(xml: bytes, tmp: Path, name: str):
    dump = tmp / f"{name}.xml"
    dump.write_bytes(xml)
    counts = wikipedia.extract_chunk(
        dump, None, tmp / f"{name}.s.parquet", tmp / f"{name}.r.parquet", rejects_out=tmp / f"{name}.rejects.csv"
    )
    rejects = pd.read_csv(tmp / f"{name}.rejects.csv")
    sentences = pq.read_table(tmp / f"{name}.s.parquet").to_pandas()
    return dict(zip(counts["what"], counts["count"])), rejects, sentences


def _clean_entity(line: bytes) -> bool:
    try:
        parsed = wikidata.parse_entity(wikidata.entity_bytes(line), frozenset(PROPERTIES))
    except Exception:
        return False
    return bool(parsed.qid) and not parsed.rejects


def malformed_report(tmp: Path, seed: int = 0) -> pd.DataFrame:
    """Fuzz the demo's dumps, parse clean and fuzzed, and tabulate per kind: injected, counted (as
    the reject kind it must be), good records lost."""
    rng = random.Random(seed)
    rows = []
    # --- Wikidata
    text = gzip.decompress((ROOT / "resources/demo/wikidata-demo-all.json.gz").read_bytes())
    good = [line.rstrip(b",") for line in text.split(b"\n") if line.strip() not in (b"", b"[", b"]")]
    clean_counts, clean_entities, clean_claims = parse_wikidata(good, tmp, "clean")
    # lines repeated as "entity listed twice" are taken among those with nothing to reject, so
    # that their repetition counts only as a duplicate
    plain = [line for line in good if _clean_entity(line)]
    fuzzed, expected = list(good), {}
    for kind in WIKIDATA_KINDS:
        for n in range(PER_KIND):
            line, counted = wikidata_bad(kind, WIKIDATA_KINDS.index(kind) * PER_KIND + n, plain)
            fuzzed.insert(rng.randrange(len(fuzzed) + 1), line)
        expected[kind] = counted
    counts, entities, claims = parse_wikidata(fuzzed, tmp, "fuzzed")
    lost_entities = len(set(clean_entities["qid"]) - set(entities["qid"]))
    clean_rows = set(map(tuple, clean_claims.to_numpy()))
    lost_claims = len(clean_rows - set(map(tuple, claims.to_numpy())))
    by_counted = pd.Series(expected).value_counts()  # kinds counted under the same reject kind
    for kind in WIKIDATA_KINDS:
        counted = expected[kind]
        found = counts.get(counted, 0) - clean_counts.get(counted, 0)
        rows.append(
            {
                "dump": "Wikidata",
                "kind": kind,
                "counted as": counted,
                "injected": PER_KIND,
                # a reject kind shared by several injected kinds is split evenly between them
                "counted": found / by_counted[counted],
                "good records lost": lost_entities + lost_claims,
            }
        )
    # --- Wikipedia
    with bz2.open(ROOT / "resources/demo/enwiki-demo-pages-articles-multistream.xml.bz2") as handle:
        xml = handle.read()
    head, _, rest = xml.partition(b"  <page>")
    body, _, tail = (b"  <page>" + rest).rpartition(b"</page>\n")
    pages = [p + b"</page>\n" for p in body.split(b"</page>\n") if p.strip()]
    clean_xml = head + b"".join(pages) + tail
    clean_counts, _, clean_sentences = parse_wikipedia(clean_xml, tmp, "clean")
    fuzzed_pages, expected = list(pages), {}
    for kind in WIKIPEDIA_KINDS:
        for n in range(PER_KIND):
            page, counted = wikipedia_bad(kind, WIKIPEDIA_KINDS.index(kind) * PER_KIND + n)
            fuzzed_pages.insert(rng.randrange(len(fuzzed_pages) + 1), page)
        expected[kind] = counted
    counts, rejects, sentences = parse_wikipedia(head + b"".join(fuzzed_pages) + tail, tmp, "fuzzed")
    lost = len(set(clean_sentences["title"]) - set(sentences["title"]))
    lost += len(
        set(zip(clean_sentences["title"], clean_sentences["text"])) - set(zip(sentences["title"], sentences["text"]))
    )
    leaked = sentences["title"].str.startswith("Fuzz page").sum()
    by_counted = pd.Series(expected).value_counts()
    reasons = rejects["reason"].value_counts()
    for kind in WIKIPEDIA_KINDS:
        rows.append(
            {
                "dump": "Wikipedia",
                "kind": kind,
                "counted as": expected[kind],
                "injected": PER_KIND,
                "counted": reasons.get(expected[kind], 0) / by_counted[expected[kind]],
                "good records lost": lost + leaked,
            }
        )
    assert clean_counts["rejected_pages"] == 0
    return pd.DataFrame(rows)


def test_every_malformed_record_is_counted_and_no_good_record_lost(tmp_path):
    report = malformed_report(tmp_path)
    assert len(report) >= 25 and report["injected"].sum() >= 200
    assert (report["counted"] == report["injected"]).all(), report[report["counted"] != report["injected"]]
    assert (report["good records lost"] == 0).all()


def released_readers(tmp: Path):
    """Each study's reader of its released files, as ``(name, write, read)``: ``write(lines)``
    puts the (byte) lines in a file of the reader's layout and gives its path; ``read()`` gives
    the records kept and the counts of the lines left out, by reason."""
    from collections import Counter

    from knowprobe.comps import released as comps
    from knowprobe.lpaqa import release as lpaqa
    from knowprobe.stest import released as stest

    comps_record = {
        "id": 0,
        "property": "can fly",
        "acceptable_concept": "robin",
        "unacceptable_concept": "penguin",
        "prefix_acceptable": "a robin",
        "prefix_unacceptable": "a penguin",
        "property_phrase": "can fly.",
        "negative_sample_type": "taxonomic",
        "similarity": 0.9,
    }
    stest_record = {
        "sub_uri": "Q1",
        "sub_label": "Ulm",
        "obj_uri": "Q2",
        "obj_label": "Germany",
        "obj_value": 1.0,
        "obj2_uri": "Q3",
        "obj2_label": "Europe",
        "obj2_value": 2.0,
    }

    def lpaqa_read(path):
        table, dropped = lpaqa.read_folder(
            tmp / "lpaqa", "lpaqa_manual_paraphrase" if path.suffix == ".txt" else "lpaqa_mine"
        )
        return list(table["template"]), Counter(dropped["reason"])

    return [
        (
            "COMPS",
            tmp / "comps_base.jsonl",
            json.dumps(comps_record).encode(),
            lambda p: _kept(comps.read_file(p, "base"), "property"),
        ),
        (
            "S-TEST",
            tmp / "P19.jsonl",
            json.dumps(stest_record).encode(),
            lambda p: _kept(stest.read_relation(p, "P19"), "sub_label"),
        ),
        (
            "LPAQA .jsonl",
            tmp / "lpaqa/mine/P19.jsonl",
            json.dumps({"template": "[X] was born in [Y] ."}).encode(),
            lpaqa_read,
        ),
        ("LPAQA .txt", tmp / "lpaqa/manual_paraphrase/P19.txt", b"[X] was born in [Y] .", lpaqa_read),
    ]


def _kept(result, column):
    frame, rejects = result
    return list(frame[column]), rejects


def test_every_released_file_reader_reads_a_bom_bad_utf8_and_compressed_data_alike(tmp_path):
    """Each study's released files (COMPS, S-TEST, LPAQA's .jsonl and .txt prompts) through the
    shared lenient reading (knowprobe.io.lenient): a byte-order mark is read as nothing, a line
    that is not UTF-8 is counted (invalid_utf8) and the rest kept, and gzip data under a text
    file's name is one error naming the file. Before: LPAQA raised UnicodeDecodeError naming
    neither file nor line, refused a .jsonl with a BOM and kept it in a .txt's first template;
    COMPS and S-TEST counted a gzip file as lines that are not UTF-8."""
    from knowprobe.io import KnowprobeError

    for name, path, good, read in released_readers(tmp_path):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\xef\xbb\xbf" + good + b"\n" + good.replace(b"r", b"\xe9") + b"\n")
        kept, rejects = read(path)
        assert len(kept) == 1 and "\ufeff" not in str(kept[0]), name
        assert dict(rejects) == {"invalid_utf8": 1}, name
        path.write_bytes(gzip.compress(good + b"\n"))
        try:
            read(path)
        except KnowprobeError as error:
            assert str(error).startswith(f"{path}: gzip-compressed data under a text file's name"), name
        else:
            raise AssertionError(f"{name}: gzip data read as text")
        path.unlink()


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        table = malformed_report(Path(tmp))
    print(table.to_markdown(index=False))
    print(f"\n{len(table)} kinds, {table['injected'].sum()} records injected, {table['counted'].sum():.0f} counted")
