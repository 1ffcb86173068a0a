"""Rule mine_man_prompts: the Mine+Man prompt set, mined prompts and LAMA's manual ones."""

import pandas as pd

from knowprobe.io import read_parquet, rule_logging, write_parquet

with rule_logging(snakemake.log[0]) as log:
    mine = read_parquet(snakemake.input.mine)
    manual = read_parquet(snakemake.input.manual)
    both = pd.concat([manual, mine], ignore_index=True).drop_duplicates(["relation", "template"], keep="first")
    log.info("%d prompts: %d manual, %d mined", len(both), len(manual), len(both) - len(manual))
    write_parquet(both.reset_index(drop=True), snakemake.output[0])
