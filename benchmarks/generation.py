"""Greedy generation (``knowprobe.scoring.causal_generate``, the multi-token probe's ``generate``) with
the model's key/value cache against the same decoder running each live row's whole sequence again,
on a real model, in the same run.

    python benchmarks/generation.py                          # SmolLM2 from PyPI, 10 facts a relation
    python benchmarks/generation.py --gguf FILE --per-relation 30 --threads 1

Workload: the first ``--per-relation`` facts of each T-REx relation of ``--lama`` (LAMA's layout;
the development checkout's ../shared/data/lama), LAMA's manual prompt of each cut at ``[Y]``
(``knowprobe.lpaqa.probe.next_token_prefix``), stopped at a newline or the template's next text
(``multitoken_probe.stop_text``), at most ``--max-new-tokens`` tokens, as the multi-token probe
asks. The cached side batches prefixes of any length together (one new token a row a step); the
other keeps the length-sorted batches of the scoring layer and drops a row once it stops. Printed:
each side's CPU seconds (``time.process_time``), the ratio, whether every generated token is the
same and the answers' log-probs' largest difference. The weights are the GGUF file's, dequantized
to float32.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from next_token_real import smollm2_file  # noqa: E402

from knowprobe import scoring  # noqa: E402
from knowprobe.lpaqa.multitoken_probe import stop_text  # noqa: E402
from knowprobe.lpaqa.probe import next_token_prefix  # noqa: E402
from knowprobe.scoring import decoding  # noqa: E402


def lama_prompts(folder: Path, per_relation: int) -> tuple[list[str], list[str]]:
    """Each T-REx fact's manual template and subject, the first ``per_relation`` of each relation."""
    relations = [json.loads(line) for line in (folder / "relations.jsonl").read_text(encoding="utf-8").splitlines()]
    template_of = {record["relation"]: record["template"] for record in relations}
    templates, subjects = [], []
    for path in sorted((folder / "TREx").glob("P*.jsonl")):
        facts = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        for fact in facts[:per_relation]:
            templates.append(template_of[path.stem])
            subjects.append(fact["sub_label"])
    return templates, subjects


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gguf", type=Path, help="a causal GGUF file (default: SmolLM2 from PyPI)")
    parser.add_argument("--lama", type=Path, default=ROOT.parent / "shared/data/lama", help="LAMA's folder")
    parser.add_argument("--per-relation", type=int, default=10)
    parser.add_argument("--max-new-tokens", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    templates, subjects = lama_prompts(args.lama, args.per_relation)
    prefixes = [next_token_prefix(t, s) for t, s in zip(templates, subjects)]
    stops = [stop_text(t) for t in templates]
    scorer = scoring.load(args.gguf or smollm2_file(), "causal", scoring.ScoringSettings(device="cpu", dtype="float32"))
    print(
        f"{len(prefixes)} prefixes, at most {args.max_new_tokens} new tokens, {args.threads} thread(s), "
        f"{platform.processor() or platform.machine()}; key/value cache usable: {decoding.uses_cache(scorer)}"
    )
    results, seconds = {}, {}
    uses_cache = decoding.uses_cache
    for side in ("whole sequences", "key/value cache"):
        decoding.uses_cache = uses_cache if side == "key/value cache" else (lambda scorer: False)
        start = time.process_time()
        results[side] = scoring.causal_generate(scorer, prefixes, stops, args.max_new_tokens)
        seconds[side] = time.process_time() - start
        decoding.uses_cache = uses_cache
        print(f"{side:>16}: {seconds[side]:7.1f} s of CPU")
    plain, cached = results["whole sequences"], results["key/value cache"]
    same = plain.generated_ids == cached.generated_ids
    difference = float(np.max(np.abs(plain.logprobs - cached.logprobs))) if len(prefixes) else 0.0
    print(
        f"ratio: {seconds['whole sequences'] / seconds['key/value cache']:.2f}x less CPU with the cache; "
        f"the same tokens: {same}; answers' log-probs differ by at most {difference:.2g}"
    )


if __name__ == "__main__":
    main()
