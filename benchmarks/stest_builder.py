"""Time and memory of S-TEST's builder on a generated located-in graph of Wikidata's size.

    python benchmarks/stest_builder.py                 # 10 million places, ~10.6 million edges
    python benchmarks/stest_builder.py --nodes 1000000

The graph is shaped like P131: 200 countries, 5,000 regions, 100,000 districts, a million
municipalities and localities below them; 5% of places have a second parent one level further up
(paths of two lengths), 0.01% of regions a back edge from their country (cycles), and 100 places
hang from 30 parents each whose parents fan out again (fan-out). Candidate objects are the
countries and 2,000 regions (single-token names); 10% of places have no label. The builder
draws 5,000 triples; the baseline walks every subject of a 1% sample as a builder without the
early stop must, and its rate is projected to the whole graph. Peak memory is the process's
maximum resident set size.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "scripts"))

from knowprobe.stest import builder  # noqa: E402


def peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # kilobytes on Linux


def graph(nodes: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    sizes = [200, 5_000, 100_000, 1_000_000]
    sizes.append(max(0, nodes - sum(sizes)))
    starts = np.cumsum([1] + sizes[:-1])  # ids from 1
    levels = [np.arange(s, s + n, dtype=np.int64) for s, n in zip(starts, sizes)]
    subjects, objects = [], []
    for depth in range(1, len(levels)):
        child, parents = levels[depth], levels[depth - 1]
        subjects.append(child)
        objects.append(rng.choice(parents, size=len(child)))
        if depth >= 2:  # a second parent one level further up: paths of two lengths
            extra = child[rng.random(len(child)) < 0.05]
            subjects.append(extra)
            objects.append(rng.choice(levels[depth - 2], size=len(extra)))
    regions = levels[1][rng.random(len(levels[1])) < 0.0001]  # cycles: the country is in the region too
    first = np.concatenate(objects[:1])
    subjects.append(first[np.searchsorted(levels[1], regions)])
    objects.append(regions)
    hubs = rng.choice(levels[-1], size=100, replace=False)  # fan-out: 30 parents, which fan out again
    for hub in hubs:
        parents = rng.choice(levels[3], size=30, replace=False)
        subjects += [np.full(30, hub), np.repeat(parents, 3)]
        objects += [parents, rng.choice(levels[2], size=90)]
    edges = builder.Edges(np.concatenate(subjects), np.concatenate(objects))
    labels = {int(i): f"Country{i}" for i in levels[0]}
    labels.update({int(i): f"Region{i}" for i in rng.choice(levels[1], size=2_000, replace=False)})
    return edges, labels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=10_000_000)
    parser.add_argument("--per-relation", type=int, default=5_000)
    parser.add_argument("--sample", type=float, default=0.01, help="share of subjects the baseline walks")
    args = parser.parse_args()

    start = time.perf_counter()
    edges, labels = graph(args.nodes)
    built = time.perf_counter() - start
    print(
        f"graph: {len(edges.nodes):,} subjects, {len(edges):,} edges, built in {built:.1f} s; peak {peak_gib():.2f} GiB"
    )

    def subject_labels(subjects):
        return {s: f"Place{s}" for s in subjects if s % 10}

    chain = builder.Chain("P131", "P131", "P131")
    start = time.perf_counter()
    triples, rejects = builder.build_relation(
        chain, {"P131": edges}, labels, subject_labels, per_relation=args.per_relation, seed=0, max_paths=10_000
    )
    draw = time.perf_counter() - start
    examined = len(triples) + sum(rejects.values())
    print(
        f"builder: {len(triples):,} triples from ~{examined:,} subjects examined in {draw:.1f} s "
        f"({dict(rejects)}); peak {peak_gib():.2f} GiB"
    )

    rng = np.random.default_rng(1)
    sample = rng.choice(edges.nodes, size=max(1, int(args.sample * len(edges.nodes))), replace=False)
    start, paths, too_many = time.perf_counter(), [], 0
    for subject in sample:
        distances = builder.object_distances(int(subject), edges, edges, 5, 10_000)
        if distances is None:
            too_many += 1
        else:
            builder.candidate_pairs(distances, labels, 1.0)
            paths.append(len(distances))
    walked = time.perf_counter() - start
    projected = walked / len(sample) * len(edges.nodes)
    print(
        f"baseline: every subject walked, {len(sample):,} sampled in {walked:.1f} s -> "
        f"{projected / 60:.1f} min for all "
        f"{len(edges.nodes):,} subjects (objects per subject: mean {np.mean(paths):.1f}, max {max(paths)}; "
        f"over max_paths: {too_many})"
    )
    print(f"ratio (whole walk / builder's draw): {projected / draw:.0f}x")


if __name__ == "__main__":
    main()
