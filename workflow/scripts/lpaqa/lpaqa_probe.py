"""Rules lpaqa_probe and lpaqa_probe_seeded: log-probs of the candidates for every (fact, prompt)
of one run's prompt sets on every dataset split (a model under one score: mask, next_token,
statement), and each pair's final hidden state at the mask (the prefix's last token), or its
statement scores over the relation's candidate set; the model is loaded once and each distinct
input scored once for all of them (the seeded job reads the hidden states of inputs the first job
scored)."""

import json
from pathlib import Path

import torch

from knowprobe import contracts, scoring
from knowprobe.io import rule_logging
from knowprobe.lpaqa import probe

with rule_logging(snakemake.log[0]) as log:
    torch.set_num_threads(snakemake.threads)
    candidates = contracts.read(snakemake.input.candidates, contracts.CANDIDATES)
    score = snakemake.params.score
    scorer = scoring.load(
        snakemake.input.model, snakemake.params.kind, scoring.ScoringSettings(**snakemake.params.scoring)
    )
    google_re = dict(snakemake.params.google_re_relations)
    facts = {
        f"{dataset}_{split}": contracts.read(snakemake.input[f"{dataset}_{split}"], contracts.MODEL_FACTS)
        for dataset, split in snakemake.params.parts
    }
    parts, part_of = {}, {}
    for prompt_set in snakemake.params.prompt_sets:
        prompts = contracts.read(snakemake.input[f"prompts/{prompt_set}"], contracts.PROMPTS)
        for dataset, split in snakemake.params.parts:
            used = probe.prompts_for(prompts, google_re) if dataset == "google_re" else prompts
            parts[f"{prompt_set}/{dataset}_{split}"] = (facts[f"{dataset}_{split}"], used)
            part_of[f"{prompt_set}/{dataset}_{split}"] = f"{dataset}_{split}"
    # the seeded job: the first job's files, whose hidden states it reads where inputs recur
    reused_keys = [key for key in snakemake.input.keys() if key.startswith("reused/") and not key.endswith("_hidden")]
    reused = [(snakemake.input[key], snakemake.input[f"{key}_hidden"]) for key in reused_keys]
    if score == "statement":
        path = snakemake.params.answer_space
        spaces = probe.read_answer_space(path) if path else None
        # the seeded job: per part, the first job's files of the same dataset split, whose
        # statement scores it takes where a (template, subject, relation) recurs
        earlier = {
            name: [(table, scores) for key, (table, scores) in zip(reused_keys, reused) if key.endswith(f"/{part}")]
            for name, part in part_of.items()
        }
        # a drawn run (lpaqa.probe.sample): C_r from every fact its filter kept, not from the draw
        objects = {
            name: json.loads(Path(snakemake.input[f"{part}_objects"]).read_text(encoding="utf-8"))
            for name, part in part_of.items()
            if f"{part}_objects" in snakemake.input.keys()
        }
        probed = probe.probe_statements(
            parts, scorer, snakemake.params.top_k, snakemake.params.pll, spaces, objects or None, earlier
        )
    else:
        probed = probe.probe_parts(parts, scorer, candidates, snakemake.params.top_k, reused, score)
    for name, table, hidden in probed:
        log.info(
            "%s: %d (fact, prompt) pairs; hidden states %s, %s", name, table.num_rows, tuple(hidden.shape), hidden.dtype
        )
        contracts.write(table, snakemake.output[name], contracts.PROBE)
        probe.write_hidden(hidden, snakemake.output[f"{name}_hidden"], table.num_rows)
