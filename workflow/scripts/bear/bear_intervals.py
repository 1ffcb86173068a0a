"""Rule bear_intervals: the BEAR score and each template's accuracy per model with its 95% cluster
bootstrap interval (relations, then their instances), and the paired comparisons of
bear.comparisons."""

import pandas as pd

from knowprobe import contracts, uncertainty
from knowprobe.bear import calibration, intervals, metrics
from knowprobe.io import rule_logging, write_csv
from knowprobe.tables import write_table

with rule_logging(snakemake.log[0]) as log:
    params = snakemake.params
    settings = uncertainty.Settings(**params.uncertainty)
    instances = contracts.read(snakemake.input.instances, contracts.BEAR_INSTANCES)
    scores = pd.concat([contracts.read(p, contracts.BEAR_SCORES) for p in snakemake.input.scores], ignore_index=True)
    predicted = metrics.predictions(scores, instances, params.ties)
    frame = intervals.items(predicted)
    table = intervals.interval_table(frame, settings, params.ddof)
    how = (
        f" Cells: value [95% interval] of a two-stage cluster bootstrap (relations drawn with replacement, then "
        f"the instances of each drawn relation, an instance with all its templates), B = {settings.bootstrap}, "
        f"seed {settings.seed}; no interval with fewer than {settings.min_clusters} relations. ties: {params.ties}."
    )
    write_table(
        snakemake.output,
        "intervals",
        table,
        intervals.layout(table),
        "Accuracy (%) per model. BEAR score: the mean over instances of the share of their templates answered "
        "right, which is the mean of the templates' micro accuracies (the leaderboard's number) where every "
        "relation has the same templates; ± sem: the standard error over the templates' accuracies "
        f"(ddof {params.ddof}), the leaderboard's ±, which is not sampling error. template k: the share of all "
        "instances answered right under a relation's k-th template (lm-pub-quiz's micro accuracy)." + how,
    )
    chosen = intervals.default_comparisons(params.comparisons, params.models)
    summary, tests = intervals.comparisons(frame, chosen, settings)
    write_table(
        snakemake.output,
        "comparisons",
        summary,
        intervals.comparison_layout(summary),
        "Paired comparisons of models on the same instances: A - B (points) of the BEAR score and of each "
        "template's accuracy, with its paired bootstrap interval; per template, the relations where A or B is "
        f"better by McNemar's exact test at {settings.alpha:g} after Holm's correction (the BEAR score's row has "
        "none: an instance's templates are not one right/wrong answer)." + how,
    )
    write_csv(tests, snakemake.output.mcnemar)
    calibrated = calibration.calibration_table(scores, predicted, params.bins, settings)
    write_table(
        snakemake.output,
        "calibration",
        calibrated,
        calibration.layout(calibrated),
        "Calibration over BEAR's answer spaces, per model and template: p(c) the softmax over the relation's "
        "answer space of the candidates' statement scores, confidence max p(c), right as BEAR counts it (ties: "
        f"{params.ties}); accuracy and mean confidence (%), ECE (%, {params.bins} equal-width bins ((m-1)/M, m/M]), "
        "the multi-class Brier score, and KL(gold objects || answer-space prior) per relation averaged over "
        "relations (the prior: mean p(c) over the relation's instances); no temperature scaling (BEAR has no split "
        "to fit one on)." + how.replace("an instance with all its templates", "per template"),
    )
    for line in intervals.headlines(table):
        log.info("%s", line)
