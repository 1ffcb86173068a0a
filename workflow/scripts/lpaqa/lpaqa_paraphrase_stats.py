"""Rule lpaqa_paraphrase_stats: how many round-trip candidates each paraphrase set kept, and why the
others were lost."""

import pandas as pd

from knowprobe.io import rule_logging, write_csv

with rule_logging(snakemake.log[0]) as log:
    stats = pd.concat([pd.read_csv(path) for path in snakemake.input.stats], ignore_index=True).fillna(0)
    log.info("\n%s", stats.to_string(index=False))
    write_csv(stats, snakemake.output[0])
