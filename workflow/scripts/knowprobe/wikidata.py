"""Wikidata JSON dump → entities and claims, in parallel chunks with bounded memory.

A dump is one entity per line (``[``, ``{...},``, …, ``]``). A single .gz has no chunk
boundaries, so one pass builds a rapidgzip seek index (``build_index``); each of N chunk
jobs then opens the dump with that index, seeks to its share of the *uncompressed* bytes
and parses the lines that start inside it (``parse_chunk``). Lines are decoded with
msgspec into structs that declare only the fields used here: the English and ``mul`` labels
and aliases, the enwiki sitelink, and the statements of the configured properties; the rest of
each entity (other languages, descriptions, other properties, references) is skipped by the
decoder without being materialised.
Rows go to Parquet in row groups as they come, so a job's memory does not grow with the dump.

Outputs: entities ``qid, label, label_lang, aliases, aliases_lang, enwiki`` (English, or
the ``mul`` default-for-all-languages value where an entity has no English one); claims
``subject, property, object, rank`` for the configured properties: the item of an item value,
the year of a date value (``"1756"``: LAMA's Google-RE asks for birth years), deprecated statements
dropped. Everything not kept is counted by kind (``REJECT_KINDS``).
"""

from __future__ import annotations

import functools
import io
import logging
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import numpy as np
import pandas as pd

from .contracts import CLAIMS, ENTITIES, PartWriter, close_all
from .io import KnowprobeError, atomic_path, is_disk_full, progress

log = logging.getLogger(__name__)

REJECT_KINDS = {
    "invalid_json": "line is not a valid JSON entity",
    "no_english_label": "entity has neither an 'en' nor a 'mul' label (claims kept, no entities row)",
    "value_not_item": "claim value is neither an item nor a date (a string, quantity, property, ...)",
    "imprecise_date": "date value less precise than a year, or before year 1",
    "no_value": "claim has 'somevalue' or 'novalue' instead of a value",
    "deprecated": "claim has deprecated rank",
    "no_id": "entity has no id, or an empty one (nothing of it kept)",
    "property_entity": "a property (P...), not an item: no study reads them (nothing of it kept)",
    "bad_id": "an id that is no Wikidata item or property id (Q12a, L1, ...): that entity or claim not kept",
    "claims_not_object": "entity's claims are a non-empty list instead of an object (its claims not kept)",
    "duplicate_entity": "entity listed again (a repeated line): the first kept (counted when gathering)",
    "duplicate_claim": "claim of a repeated entity stated again: one kept (counted when gathering)",
}
LABEL_LANGUAGES = ("en", "mul")  # English first; since 2024 many names exist only as 'mul'


# --- the declared fields; msgspec skips everything else in a line without materialising it -------


class LangValue(msgspec.Struct):
    value: str = ""


class Labels(msgspec.Struct):  # of the hundreds of languages, only these two are decoded
    en: LangValue | None = None
    mul: LangValue | None = None


class Aliases(msgspec.Struct):
    en: list[LangValue] | None = None
    mul: list[LangValue] | None = None


class Sitelink(msgspec.Struct):
    title: str = ""


class Sitelinks(msgspec.Struct):
    enwiki: Sitelink | None = None


class ObjectValue(msgspec.Struct, rename={"entity_type": "entity-type", "numeric_id": "numeric-id"}):
    """The keys of an item value and of a time value in one struct (msgspec decodes a union of
    objects into one struct); which apply is told by the data value's type."""

    entity_type: str = "item"
    numeric_id: int | None = None
    id: str | None = None  # absent in older dumps, which give only numeric-id
    time: str | None = None  # "+1756-01-27T00:00:00Z"
    precision: int | None = None  # 9 = year, 10 = month, 11 = day


class DataValue(msgspec.Struct):
    type: str = ""
    # Other object values (quantity, coordinates) decode to the struct's defaults, harmlessly:
    # only types "wikibase-entityid" and "time" are read.
    value: ObjectValue | str | float | None = None


class Snak(msgspec.Struct):
    snaktype: str = "value"
    datavalue: DataValue | None = None


class Statement(msgspec.Struct):
    mainsnak: Snak = msgspec.field(default_factory=Snak)
    rank: str = "normal"


@functools.lru_cache(maxsize=8)
def entity_decoder(properties: frozenset[str]) -> msgspec.json.Decoder:
    """A decoder whose claims struct has one field per configured property, so the statements of
    all other properties (most of an entity) are skipped in the same single pass."""
    claims = msgspec.defstruct(
        "Claims", [(p, list[Statement], msgspec.field(default_factory=list)) for p in sorted(properties)]
    )
    # Wikibase writes an empty map as [] (e.g. "labels": []), hence the list alternatives
    entity = msgspec.defstruct(
        "Entity",
        [
            ("id", str, ""),
            ("labels", Labels | list, msgspec.field(default_factory=Labels)),
            ("aliases", Aliases | list, msgspec.field(default_factory=Aliases)),
            ("sitelinks", Sitelinks | list, msgspec.field(default_factory=Sitelinks)),
            ("claims", claims | list, msgspec.field(default_factory=claims)),
        ],
    )
    return msgspec.json.Decoder(entity)


@dataclass
class ParsedEntity:
    qid: str
    label: str | None
    label_lang: str | None
    aliases: list[str]
    aliases_lang: str | None
    enwiki: str | None
    claims: list[tuple[str, str, str]]  # (property, object qid, rank)
    rejects: list[str] = field(default_factory=list)
    skipped_id: str = ""  # the id of an entity left out whole (a property, a malformed id)


ITEM_ID = re.compile(r"Q[1-9][0-9]*")
PROPERTY_ID = re.compile(r"P[1-9][0-9]*")


def item_id(value: ObjectValue) -> str | None:
    """The item id of an entity-id value, from ``id`` or (older dumps) ``numeric-id``."""
    if value.entity_type != "item":
        return None
    if value.id:
        return value.id
    return f"Q{value.numeric_id}" if value.numeric_id is not None else None


YEAR_PRECISION = 9


def year_of(value: ObjectValue) -> str | None:
    """The year of a time value precise to the year or better ("+0800-..." → "800"), else None."""
    if value.time is None or value.precision is None or value.precision < YEAR_PRECISION:
        return None
    sign, digits = value.time[:1], value.time[1:].split("-", 1)[0]
    if sign != "+" or not digits.isdigit() or int(digits) < 1:
        return None
    return str(int(digits))


def entity_bytes(line: bytes) -> memoryview:
    """The JSON object of a dump line, without its trailing comma and newline (no copy)."""
    end = len(line)
    while end and line[end - 1] in b" \t\r\n,":
        end -= 1
    start = 0
    while start < end and line[start] in b" \t":
        start += 1
    return memoryview(line)[start:end]


def parse_entity(line: bytes | memoryview, properties: frozenset[str]) -> ParsedEntity:
    """Parse one entity (a dump line's JSON object). Raises msgspec.DecodeError on bad JSON."""
    entity = entity_decoder(properties).decode(line)
    if not entity.id.strip():
        return ParsedEntity("", None, None, [], None, None, [], ["no_id"])
    if not ITEM_ID.fullmatch(entity.id):
        # items and properties share numbers (Q31, P31): only items are kept, so the two id
        # spaces never meet; anything else is malformed
        kind = "property_entity" if PROPERTY_ID.fullmatch(entity.id) else "bad_id"
        return ParsedEntity("", None, None, [], None, None, [], [kind], skipped_id=entity.id[:40])
    rejects: list[str] = []
    label = label_lang = None
    if not isinstance(entity.labels, list):
        for language in LABEL_LANGUAGES:
            value = getattr(entity.labels, language)
            if value is not None:
                label, label_lang = value.value, language
                break
    if label is None:
        rejects.append("no_english_label")
    aliases, aliases_lang = [], None
    if not isinstance(entity.aliases, list):
        for language in LABEL_LANGUAGES:
            values = getattr(entity.aliases, language)
            if values is not None:
                aliases, aliases_lang = [a.value for a in values], language
                break
    enwiki = None
    if not isinstance(entity.sitelinks, list) and entity.sitelinks.enwiki is not None:
        enwiki = entity.sitelinks.enwiki.title
    claims: list[tuple[str, str, str]] = []
    if isinstance(entity.claims, list) and entity.claims:
        rejects.append("claims_not_object")  # Wikibase writes an empty map as [], never a full list
    if not isinstance(entity.claims, list):
        for prop in entity.claims.__struct_fields__:
            for statement in getattr(entity.claims, prop):
                target, reject = claim_object(statement)
                if reject:
                    rejects.append(reject)
                else:
                    claims.append((prop, target, statement.rank))
    return ParsedEntity(entity.id, label, label_lang, aliases, aliases_lang, enwiki, claims, rejects)


def claim_object(statement: Statement) -> tuple[str | None, str | None]:
    """A statement's object (item id, or year of a date) or the kind of reject it is."""
    snak = statement.mainsnak
    if statement.rank == "deprecated":
        return None, "deprecated"
    if snak.snaktype != "value" or snak.datavalue is None:
        return None, "no_value"
    value, kind = snak.datavalue.value, snak.datavalue.type
    if not isinstance(value, ObjectValue) or kind not in ("wikibase-entityid", "time"):
        return None, "value_not_item"
    if kind == "time":
        year = year_of(value)
        return (year, None) if year is not None else (None, "imprecise_date")
    target = item_id(value)
    if target is None:
        return None, "value_not_item"
    return (target, None) if ITEM_ID.fullmatch(target) else (None, "bad_id")


# --- reading a dump in chunks ------------------------------------------------------------------


def compression(path: str | Path) -> str:
    name = str(path)
    if name.endswith(".gz"):
        return "gz"
    if name.endswith(".bz2"):
        return "bz2"
    return "none"


def open_dump(path: str | Path, index: str | Path | None = None):
    """A seekable binary reader over the uncompressed dump (rapidgzip for .gz and .bz2)."""
    path = Path(path)
    if not path.is_file():
        raise KnowprobeError(f"{path}: file not found")
    if compression(path) == "none":
        return path.open("rb", buffering=1 << 20)
    import rapidgzip

    handle = rapidgzip.open(str(path), parallelization=1)
    if index is not None:
        try:
            handle.import_index(str(index))
        except Exception as error:  # rapidgzip raises plain exceptions on an index it cannot read
            handle.close()  # an open reader left to the interpreter's exit aborts the process
            raise KnowprobeError(
                f"{index}: not a seek index rapidgzip can read ({type(error).__name__}: {error}); "
                "delete it to have it made anew"
            ) from None
    return handle


INDEX_STEP = 1 << 30  # uncompressed bytes decoded between two updates of the index pass's progress
# rapidgzip's parallel decoding of one gzip stream finds block boundaries by trial and decodes in
# two stages: on the rehearsal's dump each of its threads decoded 415 MB/s of JSON against 1,400
# for one thread decoding alone, so it is slower with fewer than four threads (2: 830 MB/s)
PARALLEL_INDEX_FROM = 4


def index_parallelization(threads: int) -> int:
    """rapidgzip's parallelization for an index pass given ``threads``: one below four threads."""
    return threads if threads >= PARALLEL_INDEX_FROM else 1


# A gzip dump's index holds a checkpoint (a 32 KiB window) per chunk rapidgzip decodes: at its
# default 4 MiB, a full dump's index is ~10 GB, on disk and in the index pass's memory; at 16 MiB
# it is a third of that, and the pass ran 10% faster (rehearsal dump: 26 against 89 MB of index,
# 1,470 against 1,310 MB/s); at 64 MiB the pass slowed to 960 MB/s and took 870 MB of buffers
INDEX_CHUNK_BYTES = 16 << 20


def indexing_reader(path: Path, parallelization: int):
    import rapidgzip

    if compression(path) == "gz":
        return rapidgzip.RapidgzipFile(str(path), parallelization=parallelization, chunk_size=INDEX_CHUNK_BYTES)
    return rapidgzip.open(str(path), parallelization=parallelization)  # bzip2: its own block sizes


def build_index(path: str | Path, index_out: str | Path, threads: int = 1, parallelization: int | None = None) -> dict:
    """One pass over the dump: its uncompressed size and, for .gz/.bz2, a rapidgzip seek index.
    ``parallelization``: rapidgzip's, instead of what ``threads`` give (benchmarks/rehearsal.py)."""
    path = Path(path)
    info = {"dump": str(path), "compression": compression(path), "compressed_bytes": path.stat().st_size}
    if info["compression"] == "none":
        info["uncompressed_bytes"] = path.stat().st_size
        with path.open("rb") as handle:
            check_complete(path, handle, info["uncompressed_bytes"], info["uncompressed_bytes"])
        Path(index_out).write_bytes(b"")
        return info
    with (
        indexing_reader(path, parallelization or index_parallelization(threads)) as handle,
        progress(total=path.stat().st_size, unit="B", unit_scale=True, desc="index") as bar,
    ):
        done = 0
        try:
            # seeking forward decodes (and indexes) without handing the data out: three times as
            # fast as reading it into Python (issue 30's rehearsal: 1.4 GB/s against 0.45 on one core)
            while True:
                position = handle.tell()
                if handle.seek(position + INDEX_STEP) < position + INDEX_STEP:
                    break  # the end of the data
                compressed = handle.tell_compressed() // 8  # rapidgzip reports bits
                bar.update(compressed - done)
                done = compressed
            bar.update(path.stat().st_size - done)
        except Exception as error:  # rapidgzip raises plain exceptions on corrupt data
            raise KnowprobeError(
                f"{path}: corrupt or truncated archive near compressed byte "
                f"{handle.tell_compressed() // 8} (uncompressed {handle.tell()}): {error}"
            ) from None
        info["uncompressed_bytes"] = handle.tell()
        check_complete(path, handle, info["uncompressed_bytes"], handle.tell_compressed() // 8)
        try:
            with atomic_path(index_out) as tmp:
                handle.export_index(str(tmp))
        except Exception as error:  # rapidgzip cannot index data that stops inside a block
            raise KnowprobeError(
                f"{path}: truncated archive: the data ends at compressed byte {handle.tell_compressed() // 8:,} "
                f"(uncompressed {info['uncompressed_bytes']:,}) inside a block ({error}); download it again"
            ) from None
    return info


def check_complete(path: Path, handle, size: int, compressed_end: int) -> None:
    """A dump is a JSON array, one entity a line: its last line is "]". One that ends elsewhere was
    cut short (a decompressor may hand out what it has of a truncated archive without complaint)."""
    handle.seek(max(0, size - 64))
    if not (b"\n" + handle.read()).rstrip().endswith(b"\n]"):
        raise KnowprobeError(
            f"{path}: truncated: the data ends at uncompressed byte {size:,} (compressed byte {compressed_end:,}) "
            "inside an entity, not with the dump's closing ']'; download it again"
        )


def chunk_range(size: int, chunk: int, chunks: int) -> tuple[int, int]:
    """The uncompressed byte range [start, end) of one chunk: lines that *start* in it are its own."""
    if not 0 <= chunk < chunks:
        raise KnowprobeError(f"chunk {chunk} is not in 0..{chunks - 1}")
    return size * chunk // chunks, size * (chunk + 1) // chunks


def iter_lines(handle, start: int, end: int) -> Iterator[tuple[int, bytes]]:
    """``(offset, line)`` for every line whose first byte lies in [start, end)."""
    if start > 0:
        handle.seek(start - 1)
        offset = start - 1 + len(handle.readline())  # the rest of the line that holds byte start-1
    else:
        handle.seek(0)
        offset = 0
    reader = io.BufferedReader(handle, buffer_size=1 << 22) if not isinstance(handle, io.BufferedReader) else handle
    while offset < end:
        line = reader.readline()
        if not line:
            raise KnowprobeError(
                f"the dump ends at uncompressed offset {offset}, before the expected {end}: the archive is truncated"
            )
        yield offset, line
        offset += len(line)


def parse_chunk(
    dump: str | Path,
    index: str | Path | None,
    size: int,
    chunk: int,
    chunks: int,
    properties: list[str],
    entities_out: str | Path,
    claims_out: str | Path,
) -> pd.DataFrame:
    """Parse one chunk of the dump into Parquet parts; returns the rejects (kind, count, example)."""
    start, end = chunk_range(size, chunk, chunks)
    wanted = frozenset(properties)
    counts: Counter[str] = Counter()
    examples: dict[str, str] = {}
    writers: list[PartWriter] = []
    ok = False
    handle = None
    offset = start
    try:
        # opened inside the try: whatever fails from here (a dump or index that cannot be opened,
        # a full disk as the second part file is created) removes the part files already made
        entities = PartWriter(entities_out, ENTITIES)
        writers.append(entities)
        claims = PartWriter(claims_out, CLAIMS)
        writers.append(claims)
        handle = open_dump(dump, index)
        with progress(total=end - start, unit="B", unit_scale=True, desc=f"chunk {chunk}") as bar:
            done = start
            for offset, line in iter_lines(handle, start, end):
                if offset - done > 1 << 24:
                    bar.update(offset - done)
                    done = offset
                view = entity_bytes(line)
                if not view or bytes(view) in (b"[", b"]"):  # the array's brackets, a blank line
                    continue
                try:
                    parsed = parse_entity(view, wanted)
                except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError) as error:
                    # a bad line (bad JSON, invalid UTF-8, nesting past the decoder's depth) is
                    # counted and skipped; only a broken archive stops the chunk
                    counts["invalid_json"] += 1
                    examples.setdefault(
                        "invalid_json", f"uncompressed offset {offset}: {type(error).__name__}: {error}"
                    )
                    continue
                for kind in parsed.rejects:
                    counts[kind] += 1
                    examples.setdefault(kind, parsed.qid or parsed.skipped_id or f"uncompressed offset {offset}")
                if not parsed.qid:
                    continue
                if parsed.label is not None:
                    entities.extend(
                        (parsed.qid,),
                        (parsed.label,),
                        (parsed.label_lang,),
                        (parsed.aliases,),
                        (parsed.aliases_lang,),
                        (parsed.enwiki,),
                    )
                if parsed.claims:
                    props, targets, ranks = zip(*parsed.claims)
                    claims.extend((parsed.qid,) * len(props), props, targets, ranks)
            bar.update(max(0, min(offset, end) - done))
        ok = True
    except KnowprobeError as error:
        raise KnowprobeError(f"{dump}: chunk {chunk}: {error}") from None
    except Exception as error:  # the decompressor's errors on corrupt or truncated data
        if is_disk_full(error):
            raise  # a full disk, not the archive: rule_logging names the file and the device
        raise KnowprobeError(
            f"{dump}: corrupt or truncated archive in chunk {chunk} near uncompressed offset "
            f"{offset}: {type(error).__name__}: {error}"
        ) from None
    finally:
        if handle is not None:
            handle.close()
        close_all(writers, ok)  # each closed, and its part removed, whatever failed
    log.info(
        "chunk %d/%d [%d, %d): %d entities, %d claims, rejects: %s",
        chunk + 1,
        chunks,
        start,
        end,
        entities.count,
        claims.count,
        dict(counts) or "none",
    )
    return pd.DataFrame(
        [
            {"chunk": chunk, "kind": kind, "description": REJECT_KINDS[kind], "count": n, "example": examples[kind]}
            for kind, n in sorted(counts.items())
        ],
        columns=["chunk", "kind", "description", "count", "example"],
    )


def gather(
    entity_parts: list, claim_parts: list, entities_out: str | Path, claims_out: str | Path
) -> tuple[int, int, dict[str, int]]:
    """Concatenate the chunks' parts into one entities and one claims table, part by part (bounded
    memory), keeping the first of entities listed twice (a mirrored or repeated line) and one of
    each claim row of such an entity: returns the rows written and the counts of what was dropped
    (``duplicate_entity``, ``duplicate_claim``). Tables downstream may then take qids as unique.

    Rows are told apart by their ids as integers, a batch at a time in numpy; only the rows of
    the (few) repeated entities go through Python, so a dump with one repeat costs what one
    without does."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .contracts import check

    for part in [*entity_parts, *claim_parts]:
        check(part, ENTITIES if part in entity_parts else CLAIMS)
    # ids as integers: a hundred million of them take 800 MB, their strings ten times that
    numbers = np.concatenate(
        [qid_numbers(pq.read_table(p, columns=["qid"])["qid"]) for p in entity_parts] or [np.empty(0, dtype=np.int64)]
    )
    numbers.sort()
    repeated = np.unique(numbers[1:][numbers[1:] == numbers[:-1]])
    del numbers
    dropped = {"duplicate_entity": 0, "duplicate_claim": 0}
    seen: set = set()

    def write(parts, out, contract, id_column, key_columns, kind):
        rows = 0
        with atomic_path(out, digest=True) as tmp:
            with pq.ParquetWriter(tmp, contract.arrow_schema(digest=True), compression="zstd") as writer:
                for part in parts:
                    for batch in pq.ParquetFile(part).iter_batches():
                        if len(repeated):
                            of_repeated = np.flatnonzero(np.isin(qid_numbers(batch.column(id_column)), repeated))
                            if len(of_repeated):
                                keep = np.ones(batch.num_rows, dtype=bool)
                                keys = zip(
                                    *(batch.column(c).take(pa.array(of_repeated)).to_pylist() for c in key_columns)
                                )
                                for row, key in zip(of_repeated.tolist(), keys):
                                    if (kind, key) in seen:
                                        keep[row] = False
                                        dropped[f"duplicate_{kind}"] += 1
                                    seen.add((kind, key))
                                batch = batch.filter(pa.array(keep))
                        writer.write_batch(batch)
                        rows += batch.num_rows
        return rows

    entities = write(entity_parts, entities_out, ENTITIES, "qid", ["qid"], "entity")
    claims = write(claim_parts, claims_out, CLAIMS, "subject", ["subject", "property", "object", "rank"], "claim")
    return entities, claims, dropped


def qid_numbers(ids) -> np.ndarray:
    """Item ids of an Arrow string array ("Q42") as int64 (42): the parser keeps only well-formed ones."""
    import pyarrow as pa
    import pyarrow.compute as pc

    return np.asarray(pc.cast(pc.utf8_slice_codeunits(ids, 1), pa.int64()), dtype=np.int64)
