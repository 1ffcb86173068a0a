"""The bootstrap intervals and paired comparisons of the full reproduction's tables, on one core,
against a straightforward per-replicate loop measured in the same run.

    python benchmarks/bootstrap.py              # B = 10,000, every study
    python benchmarks/bootstrap.py --b 2000     # quicker
    python benchmarks/bootstrap.py --studies COMPS BEAR

Tables of the full run's shapes, with random correctness (the bootstrap's cost does not depend
on the values):

- LPAQA: config.yaml's three runs (bert-base and bert-large by the mask score, gpt2 by the next
  token); the headline rows of config.yaml's prompt sets (Majority, Man,
  Top1, Top3, Top5, Opti, Oracle of the other sets) on T-REx (41 relations, 34,039 facts),
  T-REx-UHN (41 relations, 27,102 facts) and Google-RE (3 relations, 5,527 facts: too few for an
  interval, so no bootstrap), micro and macro; the default comparisons (Top1, Opti, Oracle of each
  set against Man, and each run against the next).
- S-TEST: 5 models; 5 relations of 5,000 triples; VP, FP, CP (specificity) in one mode (two for
  GPT-2: next_token and sentence), naturalness and relatedness; FP and CP against VP, each model
  against the next.
- COMPS: 22 models; BASE 49,340 pairs over 3,645 properties, WUGS and the two WUGS-DIST subsets
  13,896 pairs over 944 properties each; each model against the next on every subset.
- BEAR: the leaderboard's 23 models; 60 relations, 7,731 instances, 3 templates; the BEAR score and
  each template's accuracy, each model against the next.

Times are CPU time of this process (``time.process_time``): what the work costs one core, also
on a machine that others share.

Engine: knowprobe.uncertainty as the interval rules call it (level counts drawn per replicate and
cluster, vectorised over replicates in chunks; LPAQA's rows on the same facts resampled together,
item counts drawn once per replicate for all of them, a comparison's replicates the difference of
its rows'). Baseline: the same two-stage bootstrap written as
a loop over replicates that draws clusters, then item indices within each drawn cluster (the
textbook way), timed on ``--baseline-replicates`` replicates of one T-REx row and projected to
every row and B; the intervals of both are compared on that row.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "scripts"))

from knowprobe import uncertainty  # noqa: E402
from knowprobe.uncertainty import bootstrap  # noqa: E402

LPAQA_SETS = 10  # config.yaml: manual and nine others
LPAQA_RUNS = ["bert-base-cased", "bert-large-cased", "gpt2@next_token"]  # config.yaml's lpaqa.models and scores
LPAQA_DATASETS = {"trex": (41, 34_039), "trex_uhn": (41, 27_102), "google_re": (3, 5_527)}
COMPS_SUBSETS = {  # pairs, properties
    "base": (49_340, 3_645),
    "wugs": (13_896, 944),
    "wugs_dist_before": (13_896, 944),
    "wugs_dist_in_between": (13_896, 944),
}


def relations(rng, clusters: int, items: int, prefix: str = "P") -> np.ndarray:
    sizes = rng.multinomial(items - clusters, np.full(clusters, 1 / clusters)) + 1
    return np.repeat([f"{prefix}{i}" for i in range(clusters)], sizes)


def lpaqa_facts(rng) -> pd.DataFrame:
    frames = []
    for dataset, (clusters, items) in LPAQA_DATASETS.items():
        relation = relations(rng, clusters, items)
        objects = rng.integers(0, 300, len(relation))  # LAMA: up to a few hundred objects a relation
        for model in LPAQA_RUNS:
            rows = [("Majority", "Top1"), ("Man", "Top1")]
            rows += [(f"set{s}", m) for s in range(LPAQA_SETS - 1) for m in ("Top1", "Top3", "Top5", "Opti", "Oracle")]
            for prompts, method in rows:
                frames.append(
                    pd.DataFrame(
                        {
                            "model": model,
                            "prompts": prompts,
                            "method": method,
                            "dataset": dataset,
                            "relation": relation,
                            "fact_id": np.arange(len(relation)).astype(str),
                            "obj_label": objects.astype(str),
                            "correct": rng.random(len(relation)) < 0.35,
                        }
                    )
                )
    return pd.concat(frames, ignore_index=True)


def run_lpaqa(rng, settings) -> tuple[float, int]:
    from knowprobe.lpaqa import intervals

    facts = lpaqa_facts(rng)
    start = time.process_time()
    drawn = []
    table = intervals.interval_table(facts, settings, drawn)
    middle = time.process_time()
    config = {"baseline": {"prompt_set": "manual", "method": "Top1"}, "methods": ["Top1", "Opti", "Oracle"]}
    pairs = intervals.default_comparisons(facts, {**config, "model_pairs": None}, LPAQA_RUNS)
    summary, _ = intervals.comparisons(facts, pairs, settings, drawn[0])
    end = time.process_time()
    print(f"  LPAQA: intervals {middle - start:.2f} s ({2 * len(table)} rows), comparisons {end - middle:.2f} s")
    return end - start, 2 * len(table) + len(summary)


def run_stest(rng, settings) -> tuple[float, int]:
    from knowprobe.stest import intervals

    relation = relations(rng, 5, 25_000)
    sub = np.arange(len(relation)).astype(str)
    frames = []
    models = ["gpt2", "bert-base-cased", "bert-large-cased", "roberta-base", "roberta-large"]
    for model in models:
        modes = ["next_token", "sentence"] if model == "gpt2" else ["mask"]
        rows = [("specificity", m, mode) for m in ("VP", "FP", "CP") for mode in modes]
        rows += [("naturalness", "VP", modes[0]), ("relatedness", "-", "embedding")]
        for measure, method, mode in rows:
            frames.append(
                pd.DataFrame(
                    {
                        "model": model,
                        "measure": measure,
                        "method": method,
                        "mode": mode,
                        "relation": relation,
                        "sub_uri": sub,
                        "success": rng.random(len(relation)) < 0.6,
                    }
                )
            )
    triples = pd.concat(frames, ignore_index=True)
    start = time.process_time()
    table = intervals.interval_table(triples, settings)
    config = {"baseline": "VP", "methods": ["FP", "CP"], "model_pairs": None}
    summary, _ = intervals.comparisons(triples, intervals.default_comparisons(triples, config, models), settings)
    return time.process_time() - start, len(table) + len(summary)


def run_comps(rng, settings) -> tuple[float, int]:
    from knowprobe.comps import intervals

    frames = []
    models = [f"model{i}" for i in range(22)]
    for subset, (items, properties) in COMPS_SUBSETS.items():
        prop = relations(rng, properties, items, "property")
        for model in models:
            frames.append(
                pd.DataFrame(
                    {
                        "model": model,
                        "subset": subset,
                        "property": prop,
                        "id": np.arange(items),
                        "correct": rng.random(items) < 0.7,
                    }
                )
            )
    pairs = pd.concat(frames, ignore_index=True)
    start = time.process_time()
    table = intervals.interval_table(pairs, settings)
    chosen = intervals.default_comparisons(pairs, {"model_pairs": None}, models)
    summary, _ = intervals.comparisons(pairs, chosen, settings)
    return time.process_time() - start, len(table) + len(summary)


def run_bear(rng, settings) -> tuple[float, int]:
    from knowprobe.bear import intervals

    # BEAR: 60 relations, 7,731 instances, 3 templates; the leaderboard's 23 models
    relation = relations(rng, 60, 7_731)
    models = [f"model{i}" for i in range(23)]
    frames = [
        pd.DataFrame(
            {
                "model": model,
                "relation": relation,
                "template": template,
                "instance": np.arange(len(relation)).astype(str),
                "correct": rng.random(len(relation)) < 0.3,
            }
        )
        for model in models
        for template in range(3)
    ]
    predicted = pd.concat(frames, ignore_index=True)
    start = time.process_time()
    frame = intervals.items(predicted)
    table = intervals.interval_table(frame, settings)
    summary, _ = intervals.comparisons(frame, intervals.default_comparisons({"model_pairs": None}, models), settings)
    return time.process_time() - start, len(table) + len(summary)


def loop_bootstrap(cluster_ids, values, b: int, rng) -> np.ndarray:
    """The textbook two-stage bootstrap: per replicate, clusters with replacement, then indices."""
    groups = [values[cluster_ids == c] for c in np.unique(cluster_ids)]
    out = np.empty(b)
    for i in range(b):
        drawn = rng.integers(0, len(groups), len(groups))
        out[i] = np.mean([groups[c][rng.integers(0, len(groups[c]), len(groups[c]))].mean() for c in drawn])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--b", type=int, default=uncertainty.DEFAULT_B, help="replicates (default 10,000)")
    parser.add_argument("--baseline-replicates", type=int, default=300, help="replicates the loop is timed on")
    parser.add_argument(
        "--studies", nargs="+", default=["LPAQA", "S-TEST", "COMPS", "BEAR"], help="the studies timed (default: all)"
    )
    args = parser.parse_args()
    settings = uncertainty.Settings(bootstrap=args.b)
    rng = np.random.default_rng(0)

    # the baseline on one T-REx row, and the engine on the same row
    relation = relations(rng, 41, 34_039)
    values = rng.random(len(relation)) < 0.35
    start = time.process_time()
    slow = loop_bootstrap(relation, values, args.baseline_replicates, np.random.default_rng(1))
    loop_per_replicate = (time.process_time() - start) / args.baseline_replicates
    start = time.process_time()
    fast = bootstrap.replicates(bootstrap.clusters_of(relation, values), args.b, np.random.default_rng(1))
    engine_row = time.process_time() - start
    print(f"one T-REx row (41 relations, 34,039 facts), B = {args.b}:")
    print(f"  loop over replicates   {loop_per_replicate * args.b:8.2f} s (timed on {args.baseline_replicates})")
    print(f"  knowprobe.uncertainty  {engine_row:8.3f} s   ratio {loop_per_replicate * args.b / engine_row:.0f}x")
    print(
        f"  standard error: loop {slow.std():.5f}, engine {fast.std():.5f}; "
        f"2.5%/97.5%: loop {np.percentile(slow, [2.5, 97.5]).round(4).tolist()}, "
        f"engine {np.percentile(fast, [2.5, 97.5]).round(4).tolist()}"
    )
    print(f"\nevery table of the full reproduction, B = {args.b}, one core:")
    for study, run in [("LPAQA", run_lpaqa), ("S-TEST", run_stest), ("COMPS", run_comps), ("BEAR", run_bear)]:
        if study not in args.studies:
            continue
        seconds, rows = run(np.random.default_rng(2), settings)
        print(
            f"  {study:7s} {rows:5d} rows  {seconds:7.2f} s   "
            f"(the loop: {rows * loop_per_replicate * args.b / 60:7.1f} min projected)"
        )


if __name__ == "__main__":
    main()
