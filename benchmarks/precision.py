"""How LPAQA's and COMPS's results move with the precision the models run in, on trained models.

    python benchmarks/precision.py --demo DIR      # a finished demo run (its project directory)

The demo's models are trained (tiny BERTs and a GPT, on the demo corpus). The demo scores in
float32 (``scoring.dtype: auto`` on the CPU); this reruns LPAQA's probes and everything after
them, and COMPS's scores (``comps.scoring.dtype: null``, so that COMPS follows ``scoring.dtype``),
on a copy of the run in each precision and compares with float32, on the CPU:

- float16 (the GPU's ``scoring.dtype: auto`` for these float32 checkpoints) and bfloat16 (its
  choice for checkpoints saved in bfloat16): the encoder in that precision, the LM head and
  log-softmax in float32 (knowprobe.scoring.masked's float32_head);
- tf32: float32 weights and activations, every matrix product's operands read with TF32's 10
  mantissa bits (knowprobe.devices.emulate_tf32, what a GPU's TF32 mode does to them).

COMPS is scored twice in each: with its float32 recheck of the pairs near a tie (the default,
knowprobe.comps.probe.recheck) and without it (``comps.scoring.recheck.factor: 0``).

Compared: the top-1 prediction and its correctness for every (fact, prompt) pair, P@1 over every
test pair of a model and dataset, and the P@1 (averaged over relations, as the paper's tables) of
every model, prompt set, method, dataset and split (the numbers of Tables 2, 3, 7-10, 15); and
for COMPS each pair's decision and each subset's accuracy (the masked demo BERTs and the causal
demo GPT); for S-TEST each score row's decision (the fine object above the coarse one) and each
p_r of its table (model, measure, method, mode, relation).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent


def snakemake(project: Path, targets: list[str], config: str, what: str) -> None:
    # a config file, not --config: values given on the command line arrive as strings
    (project / "precision.yaml").write_text(config)
    command = [sys.executable, "-m", "snakemake", *targets, "--cores", "2"]
    command += ["--configfile", "resources/demo/config.yaml", "precision.yaml"]
    done = subprocess.run(command, cwd=project, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"the {what} rerun in {project} failed:\n{done.stderr[-3000:]}")


def rerun(demo: Path, directory: Path, dtype: str) -> tuple[Path, Path]:
    """A copy of the demo with LPAQA rerun from its probes on, S-TEST's and COMPS's scores, in
    ``dtype``; COMPS's scores are kept aside with its float32 recheck, then scored again without
    it. Returns the project (COMPS without the recheck) and the folder of COMPS's scores with it."""
    project = directory / dtype
    shutil.copytree(demo, project, symlinks=True)
    scoring = f"scoring: {{device: cpu, dtype: {dtype}}}\n"
    snakemake(project, ["lpaqa", "comps", "stest"], scoring + "comps: {scoring: {dtype: null}}\n", dtype)
    checked = directory / f"{dtype}-comps-recheck"
    shutil.copytree(project / "results/comps/scores", checked)
    shutil.copytree(project / "logs/comps/probe", checked / "logs")
    alone = "comps: {scoring: {dtype: null, recheck: {factor: 0}}}\n"
    snakemake(project, ["comps"], scoring + alone, f"{dtype} COMPS without the recheck")
    return project, checked


def predictions(project: Path) -> pd.DataFrame:
    frames = []
    for path in sorted((project / "results/lpaqa/probe").glob("*/*/*/*.parquet")):
        model, prompt_set, dataset = path.parts[-4:-1]
        table = pd.read_parquet(path, columns=["fact_id", "prompt_id", "prediction", "gold_rank"])
        frames.append(table.assign(model=model, prompt_set=prompt_set, dataset=dataset, split=path.stem))
    return pd.concat(frames, ignore_index=True)


def results(project: Path) -> pd.DataFrame:
    frames = [
        pd.read_parquet(path) for path in sorted((project / "results/lpaqa/selection").glob("*/*/results.parquet"))
    ]
    table = pd.concat(frames, ignore_index=True)
    keys = ["model", "fitted_on", "prompt_set", "method", "dataset", "split"]
    return table.groupby(keys)[["micro", "macro"]].mean().reset_index()  # over relations, as the tables average


def compare(base: Path, low: Path, dtype: str) -> pd.DataFrame:
    """Print how ``low``'s predictions and results differ from ``base``'s; every result, both ways."""
    keys = ["model", "prompt_set", "dataset", "split", "fact_id", "prompt_id"]
    pairs = predictions(base).merge(predictions(low), on=keys, suffixes=("_32", "_low"))
    changed = (pairs["prediction_32"] != pairs["prediction_low"]).mean()
    right_32, right_low = pairs["gold_rank_32"] == 0, pairs["gold_rank_low"] == 0
    print(
        f"{dtype}: {len(pairs):,} (fact, prompt) pairs; top-1 prediction changed for {changed:.3%}, "
        f"correctness for {(right_32 != right_low).mean():.3%}"
    )
    test = pairs[pairs["split"] == "test"].assign(right_32=right_32, right_low=right_low)
    pooled = 100 * test.groupby(["model", "dataset"])[["right_32", "right_low"]].mean()
    pooled["points"] = pooled["right_low"] - pooled["right_32"]
    pooled["pairs"] = test.groupby(["model", "dataset"]).size()
    print(f"  P@1 (%) over every test pair of every prompt set (model, dataset; {len(test):,} pairs):")
    print(pooled.round(3).to_string().replace("\n", "\n    ").join(["    ", ""]))
    both = results(base).merge(
        results(low), on=["model", "fitted_on", "prompt_set", "method", "dataset", "split"], suffixes=("_32", "_low")
    )
    both["micro_points"] = 100 * (both["micro_low"] - both["micro_32"])
    both["macro_points"] = 100 * (both["macro_low"] - both["macro_32"])
    test = both[both["split"] == "test"]
    moved = test["micro_points"].abs()
    print(
        f"  results (model x set x method x dataset, test): {len(test)}; unchanged {(moved == 0).mean():.1%}; "
        f"micro P@1 moved by at most {moved.max():.2f} points (mean |move| {moved.mean():.3f}, "
        f"mean move {test['micro_points'].mean():+.3f}), macro by at most {test['macro_points'].abs().max():.2f}"
    )
    worst = test.reindex(moved.sort_values(ascending=False).index).head(5)
    columns = ["model", "prompt_set", "method", "dataset", "micro_32", "micro_low", "micro_points"]
    print(worst[columns].to_string(index=False).replace("\n", "\n    ").join(["    ", ""]))
    return both.assign(dtype=dtype)


def compare_comps(base: Path, low: Path, label: str) -> None:
    """COMPS's pair decisions (acceptable scored above unacceptable) and each subset's accuracy,
    of the scores in folder ``low`` against those in ``base``."""
    keys = ["model", "subset", "id"]
    frames = [pd.concat(pd.read_parquet(path) for path in sorted(folder.glob("*.parquet"))) for folder in (base, low)]
    both = frames[0].merge(frames[1], on=keys, suffixes=("_32", "_low"))
    right_32 = both["acceptable_score_32"] > both["unacceptable_score_32"]
    right_low = both["acceptable_score_low"] > both["unacceptable_score_low"]
    both = both.assign(right_32=right_32, right_low=right_low)
    accuracy = 100 * both.groupby(["model", "subset"])[["right_32", "right_low"]].mean()
    accuracy["points"] = accuracy["right_low"] - accuracy["right_32"]
    accuracy["pairs"] = both.groupby(["model", "subset"]).size()
    print(
        f"  COMPS, {label}: {len(both):,} pairs; decisions equal for {(right_32 == right_low).mean():.3%}; "
        f"subset accuracy (%) moved by at most {accuracy['points'].abs().max():.3f} points:"
    )
    print(accuracy.round(3).to_string().replace("\n", "\n    ").join(["    ", ""]))


def compare_stest(base: Path, low: Path) -> None:
    """S-TEST's decisions (the fine object scored above the coarse one) and its p_r table."""
    keys = ["model", "relation", "sub_uri", "measure", "method", "mode"]
    frames = [
        pd.concat(pd.read_parquet(path) for path in sorted((project / "results/stest/scores").glob("*.parquet")))
        for project in (base, low)
    ]
    both = frames[0].merge(frames[1], on=keys, suffixes=("_32", "_low"))
    scored = both[["fine_score_32", "coarse_score_32"]].notna().all(axis=1)
    both = both[scored]
    right_32 = both["fine_score_32"] > both["coarse_score_32"]
    right_low = both["fine_score_low"] > both["coarse_score_low"]
    equal = (right_32 == right_low).groupby(both["measure"]).mean()
    tables = [pd.read_csv(project / "results/stest/tables/p_r.csv") for project in (base, low)]
    p_r = tables[0].merge(tables[1], on=["model", "measure", "method", "mode", "relation"], suffixes=("_32", "_low"))
    moved = (p_r["p_r_low"] - p_r["p_r_32"]).abs()
    print(
        f"  S-TEST: {len(both):,} scored rows; decisions equal for {(right_32 == right_low).mean():.3%} "
        f"({', '.join(f'{m} {v:.3%}' for m, v in equal.items())}); p_r entries: {len(p_r)}, unchanged "
        f"{(moved == 0).mean():.1%}, moved by at most {moved.max():.2f} points (n = {p_r['n_32'].min()}-"
        f"{p_r['n_32'].max()} triples an entry)"
    )


def recheck_lines(checked: Path) -> None:
    """What each COMPS job's float32 recheck did (its log's line)."""
    for path in sorted((checked / "logs").glob("*.log")):
        for line in path.read_text().splitlines():
            if "float32 recheck:" in line:
                print(f"    {path.stem}: {line.split('INFO ', 1)[-1]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--demo", type=Path, required=True)
    choices = ["tf32", "float16", "bfloat16"]
    parser.add_argument("--dtypes", nargs="+", default=choices, choices=choices)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        every = []
        for dtype in args.dtypes:
            low, checked = rerun(args.demo, Path(tmp), dtype)
            every.append(compare(args.demo, low, dtype))
            base = args.demo / "results/comps/scores"
            compare_comps(base, low / "results/comps/scores", f"{dtype} alone (comps.scoring.recheck.factor 0)")
            compare_comps(base, checked, f"{dtype} with the float32 recheck (the default)")
            recheck_lines(checked)
            compare_stest(args.demo, low)
    out = HERE / "results" / "precision.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    pd.concat(every, ignore_index=True).to_csv(out, index=False)
    print(f"every result: {out}")


if __name__ == "__main__":
    main()
