"""Rule lpaqa_mine_man_prompts: the Mine+Man prompt set, mined prompts and LAMA's manual ones."""

import pandas as pd

from knowprobe import contracts
from knowprobe.io import rule_logging

with rule_logging(snakemake.log[0]) as log:
    mine = contracts.read(snakemake.input.mine, contracts.PROMPTS)
    manual = contracts.read(snakemake.input.manual, contracts.PROMPTS)
    both = pd.concat([manual, mine], ignore_index=True).drop_duplicates(["relation", "template"], keep="first")
    log.info("%d prompts: %d manual, %d mined", len(both), len(manual), len(both) - len(manual))
    contracts.write(both.reset_index(drop=True), snakemake.output[0], contracts.PROMPTS)
