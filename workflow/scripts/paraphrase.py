"""Rule paraphrase: round-trip translation of seed prompts into a paraphrase prompt set."""

import torch

from knowprobe import paraphrase
from knowprobe.io import read_parquet, rule_logging, write_csv, write_parquet

with rule_logging(snakemake.log[0]) as log:
    torch.set_num_threads(snakemake.threads)
    settings = paraphrase.ParaphraseSettings(**snakemake.params.settings)
    if snakemake.params.backend == "fairseq":
        forward, backward = (
            paraphrase.FairseqTranslator(name, settings.device) for name in snakemake.params.fairseq_models
        )
    else:
        forward = paraphrase.HFTranslator(snakemake.input.forward, settings.device, settings.dtype)
        backward = paraphrase.HFTranslator(snakemake.input.backward, settings.device, settings.dtype)
    seeds = read_parquet(snakemake.input.seeds)
    candidates = paraphrase.round_trip(seeds, forward, backward, settings)
    paraphrases, lost = paraphrase.select(candidates, settings.top)
    stats = paraphrase.statistics(snakemake.params.seed_set, seeds, candidates, paraphrases, lost)
    log.info(
        "%d candidates from %d seeds; lost: %s; kept %d paraphrases for %d relations",
        len(candidates),
        len(seeds),
        ", ".join(f"{n} {reason}" for reason, n in sorted(lost.items())),
        len(paraphrases),
        paraphrases["relation"].nunique(),
    )
    write_parquet(candidates, snakemake.output.candidates)
    write_parquet(paraphrases, snakemake.output.paraphrases)
    write_csv(stats, snakemake.output.stats)
    write_parquet(paraphrase.as_prompt_set(paraphrases, snakemake.params.seed_set), snakemake.output.prompts)
