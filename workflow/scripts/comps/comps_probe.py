"""Rule comps_probe: one model's log p(property phrase | prefix) of both prefixes of every pair,
and what the tables need to know of the model (family, kind, parameters). Below float32 (on a
GPU) the pairs near a tie are rescored in float32 (knowprobe.comps.probe.recheck, the scoring
layer's recheck). A pair the model cannot score (too long for it, a phrase without tokens for
it) is left out for this model, counted by reason in the log and in its rows
(knowprobe.comps.probe.left_out)."""

import json

import torch

from knowprobe import contracts, scoring
from knowprobe.comps import probe
from knowprobe.devices import precision_name
from knowprobe.io import atomic_path, rule_logging
from knowprobe.scoring.recheck import below_float32, float32_scorer

with rule_logging(snakemake.log[0]) as log:
    torch.set_num_threads(snakemake.threads)
    stimuli = contracts.read(snakemake.input.stimuli, contracts.COMPS_STIMULI).reset_index(drop=True)
    model = snakemake.wildcards.model
    settings = probe.scoring_settings(snakemake.params.scoring, snakemake.params.dtype)

    def load(settings):
        return scoring.load(
            snakemake.input.model, snakemake.params.kind, settings, start_token=snakemake.params.start_token
        )

    scorer = load(settings)
    log.info("%s: %d pairs (%s)", model, len(stimuli), stimuli["subset"].value_counts().to_dict())
    reasons, examples = probe.left_out(scorer, stimuli)  # the same for the float32 copy: one tokenizer
    probe.log_left_out(reasons, examples, stimuli)

    def score(scorer, rows):
        return probe.score(scorer, model, stimuli.iloc[rows], snakemake.params.within_word_l2r, reasons=reasons[rows])

    scores = score(scorer, slice(None))
    recheck = snakemake.params.recheck
    if below_float32(scorer, settings) and recheck["factor"] > 0:
        precision = precision_name(settings.dtype, next(scorer.model.parameters()).dtype)
        log.info("%s scored in %s; rescoring in float32 the pairs near a tie", model, precision)
        del scorer  # one copy of the weights on the device at a time
        scorer = float32_scorer(load, settings)
        scores, report = probe.recheck(scores, lambda rows: score(scorer, rows), recheck["sample"], recheck["factor"])
        log.info("%s", report.describe())
        if report.bound_too_tight:
            log.warning(
                "a near pair's margin moved by more than half the recheck's bound: pairs beyond it may have "
                "changed sides too; raise comps.scoring.recheck.factor or score in float32 (comps.scoring.dtype)"
            )
    contracts.write(scores, snakemake.output.scores, contracts.COMPS_SCORES)
    info = {
        "model": model,
        "kind": snakemake.params.kind,
        "family": scorer.model.config.model_type,
        "parameters": int(sum(p.numel() for p in scorer.model.parameters())),
        # the token a causal model read before every text (docs/scoring.md, "The start token")
        "start_token": scorer.definition_of_start(),
    }
    with atomic_path(snakemake.output.model) as tmp:
        tmp.write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
