"""Rule lpaqa_trex_train_stats: LPAQA's Table 1 statistics of T-REx-train, beside LPAQA's own."""

from knowprobe import contracts
from knowprobe.io import rule_logging, write_csv, write_text
from knowprobe.lpaqa import trex_train
from knowprobe.tables import to_markdown

with rule_logging(snakemake.log[0]) as log:
    per_relation = trex_train.statistics(contracts.read(snakemake.input.facts, contracts.FACTS))
    table = trex_train.table1(per_relation, "knowprobe")
    markdown = to_markdown(table)
    log.info("T-REx-train statistics, averaged over %d relations:\n%s", len(per_relation), markdown)
    write_csv(per_relation, snakemake.output.per_relation)
    write_csv(table, snakemake.output.csv)
    write_text(markdown, snakemake.output.markdown)
