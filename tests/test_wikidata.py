import bz2
import gzip
import json
import re
import sys
from pathlib import Path

import msgspec
import pandas as pd
import pyarrow.parquet as pq
import pytest

from knowprobe import contracts, wikidata
from knowprobe.download import verify_checksum
from knowprobe.io import KnowprobeError

from conftest import ROOT, require_shared

sys.path.insert(0, str(ROOT / "benchmarks"))
import synthetic_wikidata  # noqa: E402

PROPS = frozenset({"P19", "P31", "P36"})


def line(**fields) -> bytes:
    entity = {"type": "item", "id": "Q1", "labels": {}, "aliases": {}, "claims": {}, "sitelinks": {}}
    entity.update(fields)
    return json.dumps(entity).encode() + b",\n"


def claim(prop, value, rank="normal", snaktype="value", value_type="wikibase-entityid"):
    snak = {"snaktype": snaktype, "property": prop}
    if value is not None:
        snak["datavalue"] = {"value": value, "type": value_type}
    return {
        "mainsnak": snak,
        "rank": rank,
        "references": [{"snaks": {"P248": [{"datavalue": {"value": {"id": "Q9"}}}]}}],
    }


def parse(raw: bytes):
    return wikidata.parse_entity(wikidata.entity_bytes(raw), PROPS)


def test_english_label_aliases_sitelink_and_item_claims():
    parsed = parse(
        line(
            id="Q42",
            labels={"en": {"language": "en", "value": "Douglas Adams"}, "fr": {"language": "fr", "value": "D. Adams"}},
            aliases={"en": [{"language": "en", "value": "DNA"}, {"language": "en", "value": "Douglas Noel Adams"}]},
            sitelinks={"enwiki": {"site": "enwiki", "title": "Douglas Adams", "badges": []}},
            claims={
                "P31": [claim("P31", {"entity-type": "item", "numeric-id": 5, "id": "Q5"})],
                "P19": [claim("P19", {"entity-type": "item", "numeric-id": 350, "id": "Q350"}, rank="preferred")],
                "P569": [claim("P569", {"time": "+1952-03-11T00:00:00Z"}, value_type="time")],
            },
        )
    )
    assert (parsed.qid, parsed.label, parsed.label_lang, parsed.enwiki) == (
        "Q42",
        "Douglas Adams",
        "en",
        "Douglas Adams",
    )
    assert (parsed.aliases, parsed.aliases_lang) == (["DNA", "Douglas Noel Adams"], "en")
    assert sorted(parsed.claims) == [("P19", "Q350", "preferred"), ("P31", "Q5", "normal")]  # P569 not configured
    assert parsed.rejects == []


def test_mul_label_is_the_fallback_and_recorded():
    parsed = parse(
        line(
            labels={"mul": {"language": "mul", "value": "Tokyo"}, "de": {"language": "de", "value": "x"}},
            aliases={"mul": [{"language": "mul", "value": "Tōkyō"}]},
        )
    )
    assert (parsed.label, parsed.label_lang, parsed.aliases, parsed.aliases_lang) == ("Tokyo", "mul", ["Tōkyō"], "mul")
    both = parse(line(labels={"mul": {"value": "Tokyo"}, "en": {"value": "Tokyo City"}}))
    assert (both.label, both.label_lang) == ("Tokyo City", "en")


def test_older_dumps_give_only_numeric_id():
    parsed = parse(
        line(labels={"en": {"value": "x"}}, claims={"P31": [claim("P31", {"entity-type": "item", "numeric-id": 5})]})
    )
    assert parsed.claims == [("P31", "Q5", "normal")]


def test_claims_that_are_not_kept_are_counted_by_kind():
    parsed = parse(
        line(
            labels={"en": {"value": "x"}},
            claims={
                "P36": [
                    claim("P36", "a string", value_type="string"),
                    claim("P36", {"entity-type": "property", "numeric-id": 31, "id": "P31"}),
                    claim("P36", None, snaktype="novalue"),
                    claim("P36", None, snaktype="somevalue"),
                    claim("P36", {"entity-type": "item", "numeric-id": 64, "id": "Q64"}, rank="deprecated"),
                    claim("P36", {"entity-type": "item", "numeric-id": 90, "id": "Q90"}),
                ]
            },
        )
    )
    assert parsed.claims == [("P36", "Q90", "normal")]
    assert sorted(parsed.rejects) == ["deprecated", "no_value", "no_value", "value_not_item", "value_not_item"]


def test_date_values_give_their_year_when_precise_to_the_year():
    def date(time, precision):
        return claim("P569", {"time": time, "precision": precision, "calendarmodel": "Q1985727"}, value_type="time")

    parsed = wikidata.parse_entity(
        wikidata.entity_bytes(
            line(
                labels={"en": {"value": "x"}},
                claims={
                    "P569": [
                        date("+1756-01-27T00:00:00Z", 11),  # a day
                        date("+0800-00-00T00:00:00Z", 9),  # a year, leading zeros
                        date("+1750-00-00T00:00:00Z", 8),  # a decade: less than a year
                        date("-0044-03-15T00:00:00Z", 11),  # before year 1
                        claim("P569", {"amount": "+3", "unit": "1"}, value_type="quantity"),
                    ]
                },
            )
        ),
        frozenset({"P569"}),
    )
    assert parsed.claims == [("P569", "1756", "normal"), ("P569", "800", "normal")]
    assert sorted(parsed.rejects) == ["imprecise_date", "imprecise_date", "value_not_item"]


def test_entity_without_english_label_and_empty_maps_written_as_lists():
    parsed = parse(line(labels=[], aliases=[], sitelinks=[], claims=[]))
    assert parsed.label is None and parsed.rejects == ["no_english_label"] and parsed.enwiki is None
    german = parse(line(labels={"de": {"value": "nur Deutsch"}}, claims={"P31": [claim("P31", {"id": "Q5"})]}))
    assert german.rejects == ["no_english_label"] and german.claims == [("P31", "Q5", "normal")]


def test_invalid_json_raises_decode_error():
    with pytest.raises(msgspec.DecodeError):
        parse(b'{"type": "item", "id": "Q1", "labels": {"en": ,\n')


def test_entity_bytes_strips_comma_and_newline_without_copying():
    raw = b'  {"id": "Q1"},\r\n'
    view = wikidata.entity_bytes(raw)
    assert bytes(view) == b'{"id": "Q1"}' and view.obj is raw


@pytest.fixture(scope="module")
def dumps(tmp_path_factory):
    """The same small synthetic dump as .json, .json.gz and .json.bz2, with two bad lines."""
    directory = tmp_path_factory.mktemp("dumps")
    plain = directory / "dump.json"
    synthetic_wikidata.write_dump(plain, 3_000_000, seed=1)
    lines = plain.read_bytes().split(b"\n")
    lines.insert(40, b'{"type": "item", "id": "Q0", "labels": {"en": ')
    lines.insert(200, b'{"type": "item", "id": "Q99999999", "labels": {"de": {"value": "x"}}},')
    data = b"\n".join(lines)
    plain.write_bytes(data)
    (directory / "dump.json.gz").write_bytes(gzip.compress(data, compresslevel=6))
    (directory / "dump.json.bz2").write_bytes(bz2.compress(data))
    return directory


def parse_in_chunks(dump: Path, chunks: int, tmp: Path):
    info = wikidata.build_index(dump, tmp / "index", threads=2)
    index = tmp / "index" if info["compression"] != "none" else None
    entities, claims, rejects = [], [], []
    for chunk in range(chunks):
        rejects.append(
            wikidata.parse_chunk(
                dump,
                index,
                info["uncompressed_bytes"],
                chunk,
                chunks,
                sorted(synthetic_wikidata.ITEM_PROPERTIES + ["P31"]),
                tmp / f"e{chunk}.parquet",
                tmp / f"c{chunk}.parquet",
            )
        )
        entities.append(pq.read_table(tmp / f"e{chunk}.parquet").to_pandas())
        claims.append(pq.read_table(tmp / f"c{chunk}.parquet").to_pandas())
    rejects = pd.concat(rejects).groupby("kind")["count"].sum().to_dict()
    return pd.concat(entities, ignore_index=True), pd.concat(claims, ignore_index=True), rejects


@pytest.mark.parametrize("suffix", ["json", "json.gz", "json.bz2"])
def test_chunked_parse_equals_one_chunk(dumps, tmp_path, suffix):
    dump = dumps / f"dump.{suffix}"
    (tmp_path / "one").mkdir()
    (tmp_path / "many").mkdir()
    entities_1, claims_1, rejects_1 = parse_in_chunks(dump, 1, tmp_path / "one")
    entities_n, claims_n, rejects_n = parse_in_chunks(dump, 7, tmp_path / "many")
    assert len(entities_1) > 200 and len(claims_1) > 1000
    pd.testing.assert_frame_equal(entities_1, entities_n)  # chunks cover the dump in order, no line twice
    pd.testing.assert_frame_equal(claims_1, claims_n)
    assert rejects_1 == rejects_n
    assert rejects_1["invalid_json"] == 1 and rejects_1["no_english_label"] == 1 and rejects_1["deprecated"] > 0


def test_truncated_archive_is_a_clear_error(dumps, tmp_path):
    data = (dumps / "dump.json.gz").read_bytes()
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(KnowprobeError, match=r"cut.json.gz: corrupt or truncated archive near compressed byte \d+"):
        wikidata.build_index(cut, tmp_path / "index")


def test_chunk_that_runs_out_of_data_names_offset(dumps, tmp_path):
    dump = dumps / "dump.json"
    size = dump.stat().st_size
    with pytest.raises(KnowprobeError, match=r"dump.json: chunk 1: the dump ends at uncompressed offset \d+"):
        wikidata.parse_chunk(dump, None, size + 10_000, 1, 2, ["P31"], tmp_path / "e.parquet", tmp_path / "c.parquet")
    assert not (tmp_path / "e.parquet").exists() and not list(tmp_path.glob(".*.part"))


def test_gather_concatenates_parts(dumps, tmp_path):
    entities, _, _ = parse_in_chunks(dumps / "dump.json", 3, tmp_path)
    rows = contracts.concat(
        [tmp_path / f"e{i}.parquet" for i in range(3)], tmp_path / "all.parquet", contracts.ENTITIES
    )
    assert rows == len(entities) == pq.read_metadata(tmp_path / "all.parquet").num_rows


def test_checksum_verification(tmp_path):
    path = tmp_path / "wikidata-20261116-all.json.gz"
    path.write_bytes(b"dump bytes")
    good = (
        "8c3f1e38a9c4d6d4a5a9b5d0f1d9e0a1  other.json.gz\n"
        "5f4a0f3c0f3bb3b1f4b1b6d2c4b0b2f5  wikidata-20261116-all.json.gz\n"
    )
    import hashlib

    good = good.replace("5f4a0f3c0f3bb3b1f4b1b6d2c4b0b2f5", hashlib.md5(b"dump bytes").hexdigest())
    verify_checksum(path, good, "md5", "md5sums.txt")
    with pytest.raises(KnowprobeError, match="does not match .* the file was deleted"):
        verify_checksum(path, good.replace(hashlib.md5(b"dump bytes").hexdigest(), "0" * 32), "md5", "md5sums.txt")
    assert not path.exists()
    with pytest.raises(KnowprobeError, match="no md5 checksum for"):
        path.write_bytes(b"x")
        verify_checksum(path, "abc  unrelated.gz\n", "md5", "md5sums.txt")


def test_real_dump_sample_from_2015(tmp_path):
    """A real dump excerpt: labels stripped, item values with numeric-id only."""
    dump = require_shared("dumps", "sample-dump-20150815.json.gz")
    info = wikidata.build_index(dump, tmp_path / "index")
    rejects = wikidata.parse_chunk(
        dump,
        tmp_path / "index",
        info["uncompressed_bytes"],
        0,
        1,
        ["P31", "P279", "P131"],
        tmp_path / "e.parquet",
        tmp_path / "c.parquet",
    )
    claims = pq.read_table(tmp_path / "c.parquet").to_pandas()
    assert len(claims) > 0 and claims["object"].str.match(r"^Q\d+$").all()
    counts = rejects.set_index("kind")["count"]
    # every entity of this excerpt had its labels stripped; its 46 properties are not kept at all
    assert counts["no_english_label"] == 55 and counts["property_entity"] == 46


def test_real_full_entity_q42():
    text = require_shared("dumps", "qwikidata_wd_Q42.json").read_bytes()
    parsed = wikidata.parse_entity(text, frozenset({"P31", "P19", "P106", "P27"}))
    assert (parsed.qid, parsed.label, parsed.enwiki) == ("Q42", "Douglas Adams", "Douglas Adams")
    assert ("P31", "Q5", "normal") in parsed.claims and ("P19", "Q350", "normal") in parsed.claims
    assert (parsed.aliases, parsed.aliases_lang) == (
        ["Douglas Noël Adams", "Douglas Noel Adams", "Douglas N. Adams"],
        "en",
    )


def test_malformed_lines_are_counted_rejects_never_a_chunk_failure(tmp_path):
    """Issue 17 items 1-2: invalid UTF-8, nesting past the decoder's depth, a missing or empty id,
    claims as a non-empty list, one-character garbage: each counted by kind; the good lines around
    them kept."""
    good = [
        line(id=f"Q{i}", labels={"en": {"value": f"Item {i}"}}, claims={"P31": [claim("P31", {"id": "Q5"})]})
        for i in range(1, 6)
    ]
    bad = {
        "invalid_json": [
            b'{"type": "item", "id": "Q90", "labels": {"en": {"value": "Caf\xe9"}}},\n',  # invalid UTF-8
            b'{"type": "item", "id": "Q91", "x": ' + b"[" * 5000 + b"]" * 5000 + b"},\n",  # too deep
            b"x,\n",  # one-character garbage
            b'{"type": "item", "id": "Q92", "labels": {"en": ,\n',  # cut short
        ],
        "no_id": [line(id="", labels={"en": {"value": "Nameless"}}), json.dumps({"labels": {}}).encode() + b",\n"],
        "claims_not_object": [line(id="Q93", labels={"en": {"value": "Listed"}}, claims=[claim("P31", {"id": "Q5"})])],
        # a property shares Q1's number: it never displaces the item (issue 27, item 7)
        "property_entity": [
            line(id="P1", labels={"en": {"value": "a property"}}, claims={"P31": [claim("P31", {"id": "Q5"})]})
        ],
        "bad_id": [
            line(id="Q12a", labels={"en": {"value": "Malformed"}}),  # issue 27, item 8
            line(id="Q94", labels={"en": {"value": "Bad object"}}, claims={"P31": [claim("P31", {"id": "Q5x"})]}),
        ],
    }
    lines = [b"[\n"]
    for i, good_line in enumerate(good):
        lines.append(good_line)
        lines += [b for kind in bad.values() for b in kind][i::5]
    lines.append(b"]\n")
    dump = tmp_path / "dump.json"
    dump.write_bytes(b"".join(lines))
    rejects = wikidata.parse_chunk(
        dump, None, dump.stat().st_size, 0, 1, ["P31"], tmp_path / "e.parquet", tmp_path / "c.parquet"
    )
    counts = dict(zip(rejects["kind"], rejects["count"]))
    assert counts == {kind: len(lines_) for kind, lines_ in bad.items()}
    assert (
        "UnicodeDecodeError" in rejects.set_index("kind").loc["invalid_json", "example"]
        or "RecursionError" in (rejects.set_index("kind").loc["invalid_json", "example"])
    )
    entities = pq.read_table(tmp_path / "e.parquet").to_pandas()
    claims = pq.read_table(tmp_path / "c.parquet").to_pandas()
    # Q93's and Q94's labels kept, their claims not
    assert set(entities["qid"]) == {"Q1", "Q2", "Q3", "Q4", "Q5", "Q93", "Q94"}
    assert entities.set_index("qid").loc["Q1", "label"] == "Item 1"
    assert rejects.set_index("kind").loc["property_entity", "example"] == "P1"
    assert set(claims["subject"]) == {"Q1", "Q2", "Q3", "Q4", "Q5"} and "" not in set(entities["qid"])


def test_an_entity_listed_twice_is_kept_once_and_counted(tmp_path):
    """Issue 17 item 3: a repeated entity line crashed T-REx-train; the gather step keeps the
    first, counts the rest, and drops the repeated claims."""
    entity = line(id="Q7", labels={"en": {"value": "Seven"}}, claims={"P31": [claim("P31", {"id": "Q5"})]})
    others = [
        line(id=f"Q{i}", labels={"en": {"value": f"Item {i}"}}, claims={"P31": [claim("P31", {"id": "Q5"})]})
        for i in (1, 2)
    ]
    parts = []
    for chunk, body in enumerate([[others[0], entity], [entity, others[1]]]):
        dump = tmp_path / f"dump{chunk}.json"
        dump.write_bytes(b"[\n" + b"".join(body) + b"]\n")
        wikidata.parse_chunk(
            dump,
            None,
            dump.stat().st_size,
            0,
            1,
            ["P31"],
            tmp_path / f"e{chunk}.parquet",
            tmp_path / f"c{chunk}.parquet",
        )
        parts.append(chunk)
    entities, claims, dropped = wikidata.gather(
        [tmp_path / f"e{c}.parquet" for c in parts],
        [tmp_path / f"c{c}.parquet" for c in parts],
        tmp_path / "entities.parquet",
        tmp_path / "claims.parquet",
    )
    assert (entities, claims) == (3, 3) and dropped == {"duplicate_entity": 1, "duplicate_claim": 1}
    table = contracts.read(tmp_path / "entities.parquet", contracts.ENTITIES)
    assert table["qid"].is_unique and sorted(table["qid"]) == ["Q1", "Q2", "Q7"]
    assert len(contracts.read(tmp_path / "claims.parquet", contracts.CLAIMS).drop_duplicates()) == 3


def test_one_repeated_entity_sends_only_its_rows_through_python(tmp_path):
    """Issue 30: once any qid repeated, the gather turned every claim row of the dump into Python
    objects (a string per id, a tuple per row, a batch at a time: 15 MB and more of Python objects
    at any moment here, and the time of a Python loop over a hundred million rows on a full
    dump). Now ids are integers in numpy and only the repeated entity's rows reach Python: the
    memory traced during the gather of 300,000 claim rows stays under 6 MB, the first of each
    row kept as before."""
    import tracemalloc

    entities = [(f"Q{i}", f"Item {i}", "en", [], None, None) for i in range(1, 2001)]
    names = ["qid", "label", "label_lang", "aliases", "aliases_lang", "enwiki"]
    parts = [entities, [entities[6], (f"Q{5000}", "Late", "en", [], None, None)]]  # Q7 again
    claim_rows = [(f"Q{1 + i % 2000}", "P31", f"Q{1 + i % 97}", "normal") for i in range(300_000)]
    claims = [claim_rows[:150_000], claim_rows[150_000:] + [("Q7", "P31", "Q8", "normal")] * 3]
    entity_paths, claim_paths = [], []
    for i, (rows, claim_part) in enumerate(zip(parts, claims)):
        entity_paths.append(tmp_path / f"e{i}.parquet")
        claim_paths.append(tmp_path / f"c{i}.parquet")
        contracts.write(pd.DataFrame(rows, columns=names), entity_paths[-1], contracts.ENTITIES)
        contracts.write(
            pd.DataFrame(claim_part, columns=["subject", "property", "object", "rank"]),
            claim_paths[-1],
            contracts.CLAIMS,
        )
    tracemalloc.start()
    written = wikidata.gather(entity_paths, claim_paths, tmp_path / "entities.parquet", tmp_path / "claims.parquet")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # each of Q7's rows once: its repeated rows dropped, those of other subjects all kept
    of_q7 = [row for part in claims for row in part if row[0] == "Q7"]
    repeats = len(of_q7) - len(set(of_q7))
    assert repeats > 3 and written == (2001, 300_003 - repeats, {"duplicate_entity": 1, "duplicate_claim": repeats})
    assert peak < 6 * 2**20, f"{peak / 2**20:.1f} MB traced"
    table = pq.read_table(tmp_path / "claims.parquet").to_pandas()
    assert len(table[table["subject"] != "Q7"]) == len([r for r in claim_rows if r[0] != "Q7"])


@pytest.mark.parametrize("share", [0.1, 0.5, 0.9, 0.99, 0.9999])
@pytest.mark.parametrize("suffix", ["json.gz", "json"])
def test_a_dump_cut_anywhere_is_one_line_naming_where_it_ends(tmp_path, share, suffix):
    """Issue 17 item 4: a cut .gz gave a traceback from the index pass (rapidgzip's "All window
    sizes must be at least 32 KiB") or hid the cut; now it is one line from the index pass."""
    data = (ROOT / "resources/demo/wikidata-demo-all.json.gz").read_bytes()
    if suffix == "json":
        data = gzip.decompress(data)
    cut = tmp_path / f"cut.{suffix}"
    cut.write_bytes(data[: int(len(data) * share)])
    with pytest.raises(KnowprobeError) as error:
        wikidata.build_index(cut, tmp_path / "index")
    message = str(error.value)
    assert message.startswith(f"{cut}: ") and "\n" not in message
    assert re.search(r"(ends at|near) (uncompressed|compressed) byte [\d,]+", message), message


def test_a_chunk_that_fails_mid_write_leaves_no_part_files(tmp_path, monkeypatch):
    """Issue 27, item 10: a full disk mid-chunk left both writers' .part files behind (the claims
    writer was never closed) and was reported as a corrupt archive."""
    import errno

    import pyarrow.parquet as pq

    lines = [b"[\n"] + [
        line(id=f"Q{i}", labels={"en": {"value": f"Item {i}"}}, claims={"P31": [claim("P31", {"id": "Q5"})]})
        for i in range(1, 6)
    ] + [b"]\n"]  # fmt: skip
    dump = tmp_path / "dump.json"
    dump.write_bytes(b"".join(lines))
    out = tmp_path / "parts"

    def full(self, table, *args, **kwargs):
        raise OSError("IOError: [Errno 28] Error writing bytes to file. Detail: [errno 28] No space left on device")

    monkeypatch.setattr(pq.ParquetWriter, "write_table", full)
    with pytest.raises(OSError) as error:
        wikidata.parse_chunk(dump, None, dump.stat().st_size, 0, 1, ["P31"], out / "e.parquet", out / "c.parquet")
    assert error.value.errno == errno.ENOSPC and error.value.filename == str(out / "e.parquet")
    assert sorted(p.name for p in out.iterdir()) == []  # no .part file, no table


@pytest.mark.parametrize("damage", ["index", "dump"])
def test_a_chunk_that_cannot_open_its_input_leaves_no_part_file(dumps, tmp_path, damage):
    """Issue 44, item 10: parse_chunk opened its two part writers before its ``try``, so a seek
    index rapidgzip could not read (a ValueError traceback, then an abort at exit) or a dump gone
    missing left .e.parquet.part and .c.parquet.part behind."""
    dump = tmp_path / "dump.json.gz"
    dump.write_bytes((dumps / "dump.json.gz").read_bytes())
    index = tmp_path / "index"
    index.write_bytes(b"not an index" * 10)
    if damage == "dump":
        wikidata.build_index(dump, index)
        dump.unlink()
        expected = rf"{re.escape(str(dump))}: chunk 0: {re.escape(str(dump))}: file not found"
    else:
        expected = rf"{re.escape(str(dump))}: chunk 0: {re.escape(str(index))}: not a seek index rapidgzip can read"
    out = tmp_path / "parts"
    with pytest.raises(KnowprobeError, match=expected):
        wikidata.parse_chunk(dump, index, 10**6, 0, 1, ["P31"], out / "e.parquet", out / "c.parquet")
    assert sorted(p.name for p in out.iterdir()) == []
