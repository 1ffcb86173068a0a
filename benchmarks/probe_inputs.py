"""How many (fact, prompt) pairs LPAQA's probe is asked for, and how many distinct inputs it scores.

    python benchmarks/probe_inputs.py --demo DIR        # a finished demo run: every prompt set
    python benchmarks/probe_inputs.py                   # config.yaml's sets as far as ../shared builds them

An input is a template filled with a subject: the same input recurs across prompt sets (Mine+Man
holds Mine and Man; Man+Para and Mine+Para hold their seeds; LPAQA's released sets overlap ours),
across splits (a subject in T-REx test and in T-REx-train) and datasets (Google-RE's people in
T-REx's P19), and within a split (an N-M relation's facts of one subject). The probe scores each
distinct input once per model (``knowprobe.lpaqa.probe.probe_parts``); this counts, per model and
probe job, the pairs asked for and the distinct inputs scored.

``--demo DIR`` reads a finished demo's prompt sets and filtered facts. Without it, the pairs of
config.yaml are built from the public files in ../shared with the workflow's own code: LAMA's
relations (the manual prompts and config.yaml's Google-RE templates), its T-REx test facts (14 of
the 41 relations are in ../shared) and Google-RE, LPAQA's released T-REx-train (41 relations, what
``trex_train.source: lpaqa`` reads; config.yaml builds its own from Wikidata) and its Google-RE
view, filtered by LAMA's filter with a tokenizer whose vocabulary is LAMA's common vocabulary
(every common word one token, as in bert-base-cased). Of config.yaml's ten prompt sets only the
manual one can be built offline: the others need the Wikipedia dump, the translation models and
the language models themselves.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))

from knowprobe import contracts, demo_model, vocab  # noqa: E402
from knowprobe.lpaqa import lama, probe, trex_train  # noqa: E402
from knowprobe.prompts import fill_template  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
SEEDED = {"mine_para"}  # probed by the second job of a model (workflow/rules/lpaqa/common.smk)


def count(parts: dict[tuple[str, str], tuple[pd.DataFrame, pd.DataFrame]]) -> dict[str, int]:
    """Pairs asked for and distinct inputs, in all and per probe job (first, seeded)."""
    texts = {"first": [], "seeded": []}
    for (prompt_set, _), (facts, prompts) in parts.items():
        pairs = probe.pair_facts_with_prompts(facts, prompts)
        job = "seeded" if prompt_set in SEEDED else "first"
        texts[job] += [fill_template(t, s, "[MASK]") for t, s in zip(pairs["template"], pairs["sub_label"])]
    first, seeded = set(texts["first"]), set(texts["seeded"])
    return {
        "pairs": len(texts["first"]) + len(texts["seeded"]),
        "distinct": len(first | seeded),
        "first_pairs": len(texts["first"]),
        "first_distinct": len(first),
        "seeded_pairs": len(texts["seeded"]),
        "seeded_distinct": len(seeded),
        "seeded_scored": len(seeded - first),  # what the seeded job runs the encoder on
    }


def parts_of(prompt_sets: dict[str, pd.DataFrame], facts: dict[str, pd.DataFrame], google_re: dict) -> dict:
    parts = {}
    for name, prompts in prompt_sets.items():
        for part, part_facts in facts.items():
            used = probe.prompts_for(prompts, google_re) if part.startswith("google_re") else prompts
            parts[(name, part)] = (part_facts, used)
    return parts


def demo_parts(demo: Path) -> dict[str, dict]:
    config = yaml.safe_load((demo / "resources/demo/config.yaml").read_text())
    google_re = {"place_of_birth": "P19", "date_of_birth": "P569", "place_of_death": "P20"}
    google_re.update(config["lpaqa"].get("google_re_relations", {}))
    prompt_sets = {
        name: contracts.read(demo / f"results/lpaqa/prompts/{name}.parquet", contracts.PROMPTS)
        for name in config["lpaqa"]["prompt_sets"]
    }
    out = {}
    for model in sorted(p.name for p in (demo / "results/lpaqa/filtered").iterdir()):
        facts = {
            f"{d}_{s}": contracts.read(demo / f"results/lpaqa/filtered/{model}/{d}/{s}.parquet", contracts.MODEL_FACTS)
            for d in config["lpaqa"]["datasets"]
            for s in ("test", "train_dev")
        }
        out[model] = parts_of(prompt_sets, facts, google_re)
    return out


def shared_parts() -> dict[str, dict]:
    """config.yaml's manual prompt set on T-REx and Google-RE, test and T-REx-train, from ../shared."""
    if not SHARED.is_dir():
        raise SystemExit(f"{SHARED}: not here; give --demo DIR")
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    relations = lama.read_relations(SHARED / "lama/relations.jsonl")
    manual = lama.manual_prompts(relations, config["lpaqa"]["lama"]["google_re_templates"])
    google_re = {"place_of_birth": "P19", "date_of_birth": "P569", "place_of_death": "P20"}
    test = lama.read_trex(SHARED / "lama", relations, sorted(p.stem for p in (SHARED / "lama/TREx").glob("P*.jsonl")))
    google_test = lama.read_google_re(SHARED / "lama")
    released = sorted(p.stem for p in (SHARED / "lpaqa/TREx_train").glob("P*.jsonl"))
    train = trex_train.read_lpaqa(SHARED / "lpaqa/TREx_train", released)
    google_train = trex_train.google_re_train(train, google_test, google_re)
    words = [w for w in (SHARED / "lama/common_vocab_cased.txt").read_text().split("\n") if w.strip()]
    tokenizer = demo_model.make_tokenizer(demo_model.SPECIAL_TOKENS + sorted(set(words)))
    candidate_ids = vocab.candidate_table(tokenizer, words)["token_id"].to_numpy()
    facts = {}
    for name, table in [
        ("trex_test", test),
        ("trex_train_dev", train),
        ("google_re_test", google_test),
        ("google_re_train_dev", google_train),
    ]:
        kept, _ = vocab.filter_facts(table, tokenizer, candidate_ids)
        facts[name] = kept
    return {"bert-base-cased (manual set)": parts_of({"manual": manual}, facts, google_re)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--demo", type=Path, help="a finished demo run (its project directory)")
    args = parser.parse_args()
    models = demo_parts(args.demo) if args.demo else shared_parts()
    print(
        "| model | pairs asked for | distinct inputs scored | ratio | first job: pairs, distinct "
        "| seeded job: pairs, distinct, run through the encoder |"
    )
    print("|---|---|---|---|---|---|")
    for model, parts in models.items():
        c = count(parts)
        print(
            f"| {model} | {c['pairs']:,} | {c['distinct']:,} | {c['pairs'] / max(1, c['distinct']):.2f} | "
            f"{c['first_pairs']:,}, {c['first_distinct']:,} | "
            f"{c['seeded_pairs']:,}, {c['seeded_distinct']:,}, {c['seeded_scored']:,} |"
        )


if __name__ == "__main__":
    main()
