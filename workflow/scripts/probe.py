"""Rule probe: log-probs of the candidates for every (fact, prompt) of one model, prompt set and dataset."""

import torch

from knowprobe import probe
from knowprobe.io import read_parquet, rule_logging, write_parquet
from knowprobe.models import load_masked_lm, load_tokenizer

with rule_logging(snakemake.log[0]):
    torch.set_num_threads(snakemake.threads)
    settings = probe.ProbeSettings(**snakemake.params.settings)
    device = probe.resolve_device(settings.device)
    tokenizer = load_tokenizer(snakemake.input.model)
    model = load_masked_lm(snakemake.input.model, dtype=probe.resolve_dtype(settings.dtype, device)).to(device)
    table = probe.probe(
        read_parquet(snakemake.input.facts),
        read_parquet(snakemake.input.prompts),
        model,
        tokenizer,
        read_parquet(snakemake.input.candidates),
        settings,
    )
    write_parquet(table, snakemake.output[0])
