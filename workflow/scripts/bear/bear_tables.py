"""Rule bear_tables: the BEAR score of each model (each template's micro accuracy, their mean ±
standard error) beside the leaderboard's with the random baseline; accuracy per relation and per
domain (Markdown, CSV, LaTeX)."""

import json

import pandas as pd

from knowprobe import contracts
from knowprobe.bear import metrics, tables
from knowprobe.bear.dataset import read_relation_info, sample_note, verify_digest
from knowprobe.io import rule_logging
from knowprobe.tables import load_paper, write_table

with rule_logging(snakemake.log[0]) as log:
    params = snakemake.params
    paper = load_paper(snakemake.input.paper)
    relations = contracts.read(snakemake.input.relations, contracts.BEAR_RELATIONS)
    info = snakemake.input.relation_info or None
    if info and params.relation_info_sha256:
        verify_digest(info, params.relation_info_sha256, "bear.relation_info.sha256")
    domains = read_relation_info(info)
    relations = tables.with_domains(relations, domains)
    if info is None:
        log.info("bear.relation_info.path is null: no domains; the domains table has no rows")
    elif missing := [code for code in relations["relation"] if code not in domains]:
        log.warning("%s: no domains for %d relations (%s)", info, len(missing), ", ".join(missing[:5]))
    instances = contracts.read(snakemake.input.instances, contracts.BEAR_INSTANCES)
    scores = pd.concat([contracts.read(p, contracts.BEAR_SCORES) for p in snakemake.input.scores], ignore_index=True)
    models = pd.DataFrame([json.loads(open(p, encoding="utf-8").read()) for p in snakemake.input.models])
    predicted = metrics.predictions(scores, instances, params.ties)
    settings = tables.model_settings(models, params.pll, params.conditional, params.ties)
    baseline = metrics.random_baseline(instances, relations)
    rule = f"ties: {params.ties}" + (" (the answer first in the answer space wins)" if params.ties == "first" else "")
    rule += tables.left_out_note(models)
    rule += sample_note(params.per_relation, params.seed, len(instances))

    def save(name, long, layout, caption):
        write_table(snakemake.output, name, long, layout, caption)

    accuracy = tables.accuracy(predicted, models, paper, params.ddof, settings)
    accuracy["random_baseline"] = baseline
    published = paper["dataset"]["random_baseline"] if len(instances) == paper["dataset"]["instances"] else None
    save(
        "accuracy",
        accuracy,
        tables.accuracy_layout(accuracy, baseline, published),
        f"BEAR score (%): each template's accuracy over all {len(instances):,} instances (micro), their mean ± "
        f"standard error (ddof {params.ddof}), beside the leaderboard's (lm-pub-quiz.github.io) where it lists the "
        f"model, and the difference (ours − leaderboard); the random baseline is the mean over instances of "
        f"1 / |answer space|. {rule}.",
    )
    per_relation = tables.relations_table(predicted, relations, settings)
    save(
        "relations",
        per_relation,
        tables.relations_layout(per_relation, params.ddof),
        f"Accuracy (%) per relation: mean ± standard error over its templates, per model; answers is the size of "
        f"its answer space. {rule}.",
    )
    per_domain = tables.domains_table(predicted, relations, settings, params.divide_support)
    save(
        "domains",
        per_domain,
        tables.domains_layout(per_domain, params.ddof),
        (
            "No domains: bear.relation_info.path is null (no relation_info.json), so no accuracy per domain"
            if info is None
            else "Accuracy (%) per domain (relation_info.json): mean ± standard error over the templates of the "
            "micro accuracy of the domain's relations"
            + (
                ", each weighted by its instances divided by its number of domains (lm-pub-quiz)"
                if params.divide_support
                else ""
            )
        )
        + f". {rule}.",
    )
    for line in tables.headlines(accuracy):
        log.info("%s", line)
    log.info("random baseline %.2f%%", baseline)
