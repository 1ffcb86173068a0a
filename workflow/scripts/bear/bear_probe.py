"""Rule bear_probe: one model's statement score of every candidate answer of every BEAR instance
under every template, and what the tables need to know of the model (family, kind, parameters,
the statements it could not take: left out, counted by reason).
Below float32 (half precision on a GPU, or bear.scoring.dtype) the answers near a tie are rescored
in float32 (knowprobe.bear.probe.recheck, the scoring layer's recheck)."""

import json
import time

import torch

from knowprobe import contracts, scoring
from knowprobe.bear import probe
from knowprobe.devices import precision_name
from knowprobe.io import atomic_path, rule_logging
from knowprobe.scoring.recheck import below_float32, float32_scorer

with rule_logging(snakemake.log[0]) as log:
    torch.set_num_threads(snakemake.threads)
    relations = contracts.read(snakemake.input.relations, contracts.BEAR_RELATIONS)
    instances = contracts.read(snakemake.input.instances, contracts.BEAR_INSTANCES)
    model, kind, options = snakemake.wildcards.model, snakemake.params.kind, snakemake.params.bear_scoring
    # causal LMs: the model's start token before every statement, whether or not the tokenizer
    # adds one (lm-pub-quiz's ensure_bos_token_added=True puts GPT-2's <|endoftext|> first; the
    # scoring layer's start_token carries that to other tokenizers)
    dtype = options["dtype"]
    settings = scoring.ScoringSettings(**{**snakemake.params.scoring, **({} if dtype is None else {"dtype": dtype})})

    def load(settings):
        return scoring.load(snakemake.input.model, kind, settings, start_token=True)

    scorer = load(settings)
    statements = probe.statements(relations, instances, options["capitalize"])
    log.info(
        "%s (%s): %d statements (%d relations, %d instances, their templates and answers)",
        model,
        kind,
        len(statements),
        len(relations),
        len(instances),
    )
    # a statement this model cannot take (too long, no answer token, its mask token) is left out,
    # counted by reason; the rest are scored
    statements, left_out = probe.leave_out(scorer, statements, instances, options["conditional"])
    statements = statements.reset_index(drop=True)
    if len(left_out):
        log.warning("%s: left out %s", model, probe.left_out_line(left_out))
    started = time.perf_counter()
    scores = probe.score(scorer, model, statements, options["pll"], options["conditional"])
    log.info("scored in %.1f s", time.perf_counter() - started)
    recheck = options["recheck"]
    if below_float32(scorer, settings) and recheck["factor"] > 0:
        precision = precision_name(settings.dtype, next(scorer.model.parameters()).dtype)
        log.info("%s scored in %s; rescoring in float32 the answers near a tie", model, precision)
        del scorer  # one copy of the weights on the device at a time
        scorer = float32_scorer(load, settings)
        started = time.perf_counter()
        scores, report = probe.recheck(
            scores,
            lambda rows: probe.score(scorer, model, statements.iloc[rows], options["pll"], options["conditional"])[
                "score"
            ].to_numpy(),
            recheck["sample"],
            recheck["factor"],
        )
        log.info("%s (%.1f s)", report.describe(), time.perf_counter() - started)
        if report.bound_too_tight:
            log.warning(
                "a near group's scores moved by more than half the recheck's bound: groups beyond it may have "
                "changed their answer too; raise bear.scoring.recheck.factor or score in float32 (bear.scoring.dtype)"
            )
    contracts.write(scores, snakemake.output.scores, contracts.BEAR_SCORES)
    info = {
        "model": model,
        "kind": kind,
        "hub_id": snakemake.params.hub_id,
        "family": scorer.model.config.model_type,
        "parameters": int(sum(p.numel() for p in scorer.model.parameters())),
        # the token a causal model read before every text (docs/scoring.md, "The start token")
        "start_token": scorer.definition_of_start(),
        "left_out": left_out.to_dict("records"),
    }
    with atomic_path(snakemake.output.model) as tmp:
        tmp.write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
