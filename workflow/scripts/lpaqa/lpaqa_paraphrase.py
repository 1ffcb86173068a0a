"""Rule lpaqa_paraphrase: round-trip translation of seed prompts into a paraphrase prompt set."""

import torch

from knowprobe import contracts
from knowprobe.io import rule_logging, write_csv
from knowprobe.lpaqa import paraphrase

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
    seeds = contracts.read(snakemake.input.seeds, contracts.PROMPTS)
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
    contracts.write(candidates, snakemake.output.candidates, contracts.PARAPHRASE_CANDIDATES)
    contracts.write(paraphrases, snakemake.output.paraphrases, contracts.PARAPHRASES)
    write_csv(stats, snakemake.output.stats)
    contracts.write(
        paraphrase.as_prompt_set(paraphrases, snakemake.params.seed_set), snakemake.output.prompts, contracts.PROMPTS
    )
