"""Speed and memory of the Wikidata parse against raw decompression and a plain json.loads loop.

    python benchmarks/wikidata_parse.py                 # 1 GB and 0.5 GB generated dumps
    python benchmarks/wikidata_parse.py --size-mb 2000

On a generated .json.gz dump with realistic entity sizes (benchmarks/synthetic_wikidata.py),
all on one core, in one run:
- raw decompression: python-isal streaming, and rapidgzip reading with the seek index (what a
  chunk job does);
- baseline: decompression (isal) + ``json.loads`` of every line + picking the same fields
  (English label, aliases, enwiki title, item values of the configured properties);
- knowprobe: ``wikidata.parse_chunk`` over the whole dump as one chunk: decompression +
  parse + Parquet, end to end; and the one-time index pass;
- peak memory of a parse job (a fresh process) at two input sizes.
Prints MB/s of uncompressed JSON and entities/s, the ratios, and a projection for a full dump.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "workflow" / "scripts"))
sys.path.insert(0, str(HERE))

import synthetic_wikidata  # noqa: E402

from knowprobe import wikidata  # noqa: E402

PROPERTIES = sorted(synthetic_wikidata.ITEM_PROPERTIES + ["P31"])
FULL_DUMP_ENTITIES = 110e6


def dump_of(size_mb: int, directory: Path) -> tuple[Path, dict]:
    path = directory / f"synthetic-{size_mb}MB.json.gz"
    meta = path.with_suffix(".meta.json")
    if path.exists() and meta.exists():
        return path, json.loads(meta.read_text())
    start = time.perf_counter()
    info = synthetic_wikidata.write_dump(path, size_mb * 1_000_000, seed=size_mb)
    info["compressed_bytes"] = path.stat().st_size
    meta.write_text(json.dumps(info))
    print(
        f"generated {path.name}: {info['entities']:,} entities, {info['uncompressed_bytes'] / 1e6:.0f} MB "
        f"({info['compressed_bytes'] / 1e6:.0f} MB gz) in {time.perf_counter() - start:.0f} s"
    )
    return path, info


def best_of(repeats: int, function) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def isal_decompress(path: Path) -> None:
    from isal import igzip

    with igzip.open(path, "rb") as handle:
        while handle.read(1 << 24):
            pass


def rapidgzip_decompress(path: Path, index: Path) -> None:
    with wikidata.open_dump(path, index) as handle:
        while handle.read(1 << 24):
            pass


def json_loads_loop(path: Path) -> int:
    """The plain way: json.loads every line and pick the same fields as knowprobe."""
    from isal import igzip

    wanted, entities = set(PROPERTIES), 0
    with igzip.open(path, "rb") as handle:
        for line in handle:
            line = line.rstrip(b",\n")
            if len(line) <= 1:
                continue
            entity = json.loads(line)
            entities += 1
            labels = entity.get("labels") or {}
            (labels.get("en") or labels.get("mul") or {}).get("value")
            [a["value"] for a in (entity.get("aliases") or {}).get("en", [])]
            ((entity.get("sitelinks") or {}).get("enwiki") or {}).get("title")
            for prop in wanted.intersection(entity.get("claims") or {}):
                for statement in entity["claims"][prop]:
                    snak = statement["mainsnak"]
                    if statement.get("rank") != "deprecated" and snak.get("snaktype") == "value":
                        (snak["datavalue"]["value"] or {}).get("id")
    return entities


def knowprobe_parse(path: Path, index: Path, size: int, out: Path) -> None:
    wikidata.parse_chunk(path, index, size, 0, 1, PROPERTIES, out / "entities.parquet", out / "claims.parquet")


def peak_memory_mb(path: Path, index: Path, size: int, out: Path) -> float:
    """Peak RSS of a fresh process that parses the whole dump as one chunk."""
    code = (
        f"import sys; sys.path[:0] = [{str(HERE.parent / 'workflow' / 'scripts')!r}]; from knowprobe import wikidata; "
        f"wikidata.parse_chunk({str(path)!r}, {str(index)!r}, {size}, 0, 1, {PROPERTIES!r}, "
        f"{str(out / 'm-entities.parquet')!r}, {str(out / 'm-claims.parquet')!r}); "
        f"import resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(result.stdout.split()[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=1000, help="uncompressed size of the large dump")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workdir", default="benchmarks/results/wikidata")
    parser.add_argument("--out", default="benchmarks/results/wikidata_parse.json")
    args = parser.parse_args()
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    import logging

    logging.disable(logging.INFO)

    large, info = dump_of(args.size_mb, workdir)
    small, small_info = dump_of(args.size_mb // 2, workdir)
    mb = info["uncompressed_bytes"] / 1e6

    index = workdir / f"{large.name}.index"
    start = time.perf_counter()
    wikidata.build_index(large, index, threads=1)
    index_s = time.perf_counter() - start
    small_index = workdir / f"{small.name}.index"
    wikidata.build_index(small, small_index, threads=1)

    isal_s = best_of(args.repeats, lambda: isal_decompress(large))
    rapid_s = best_of(args.repeats, lambda: rapidgzip_decompress(large, index))
    json_s = best_of(min(2, args.repeats), lambda: json_loads_loop(large))
    parse_s = best_of(args.repeats, lambda: knowprobe_parse(large, index, info["uncompressed_bytes"], workdir))
    memory_small = peak_memory_mb(small, small_index, small_info["uncompressed_bytes"], workdir)
    memory_large = peak_memory_mb(large, index, info["uncompressed_bytes"], workdir)

    def rate(seconds):
        return mb / seconds

    result = {
        "dump_mb": round(mb),
        "entities": info["entities"],
        "mean_entity_kb": round(mb * 1e3 / info["entities"], 1),
        "compressed_mb": round(info["compressed_bytes"] / 1e6),
        "isal_decompress_mb_s": rate(isal_s),
        "rapidgzip_indexed_decompress_mb_s": rate(rapid_s),
        "index_pass_mb_s": rate(index_s),
        "json_loads_loop_mb_s": rate(json_s),
        "knowprobe_mb_s": rate(parse_s),
        "knowprobe_entities_s": info["entities"] / parse_s,
        "speedup_vs_json_loads": json_s / parse_s,
        "share_of_isal_decompression": isal_s / parse_s,
        "peak_rss_mb": {
            f"{round(small_info['uncompressed_bytes'] / 1e6)} MB": memory_small,
            f"{round(mb)} MB": memory_large,
        },
    }
    full_mb = FULL_DUMP_ENTITIES * result["mean_entity_kb"] / 1e3
    result["projection_full_dump_mb"] = full_mb
    result["projection_chunks_16_cores_min"] = FULL_DUMP_ENTITIES / result["knowprobe_entities_s"] / 16 / 60
    result["projection_index_pass_1_thread_min"] = full_mb / result["index_pass_mb_s"] / 60
    print(
        f"dump: {result['dump_mb']} MB of JSON ({result['compressed_mb']} MB gz), {info['entities']:,} entities, "
        f"{result['mean_entity_kb']} kB each on average; one core, best of {args.repeats}"
    )
    print(f"raw decompression, isal streaming:       {result['isal_decompress_mb_s']:7.0f} MB/s")
    print(f"raw decompression, rapidgzip with index: {result['rapidgzip_indexed_decompress_mb_s']:7.0f} MB/s")
    print(f"index pass (one-time, 1 thread):         {result['index_pass_mb_s']:7.0f} MB/s")
    print(f"json.loads loop (isal + json.loads):     {result['json_loads_loop_mb_s']:7.0f} MB/s")
    print(
        f"knowprobe parse_chunk, end to end:       {result['knowprobe_mb_s']:7.0f} MB/s, "
        f"{result['knowprobe_entities_s']:,.0f} entities/s"
    )
    print(
        f"ratio knowprobe / json.loads loop: {result['speedup_vs_json_loads']:.2f}x; "
        f"knowprobe at {100 * result['share_of_isal_decompression']:.0f}% of isal's raw decompression speed"
    )
    print("peak memory of a parse job: " + ", ".join(f"{k}: {v:.0f} MB" for k, v in result["peak_rss_mb"].items()))
    print(
        f"projection for a full dump of {FULL_DUMP_ENTITIES / 1e6:.0f} M entities of this mean size "
        f"({full_mb / 1e6:.2f} TB of JSON): chunk jobs on 16 cores {result['projection_chunks_16_cores_min']:.0f} min, "
        f"after an index pass of {result['projection_index_pass_1_thread_min']:.0f} min at the 1-thread rate "
        f"(rapidgzip spreads it over wikidata.index_threads)"
    )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
