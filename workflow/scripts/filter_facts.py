"""Rule filter_facts: LAMA's filter for one model; kept facts and per-relation drop counts."""

from knowprobe import vocab
from knowprobe.io import read_parquet, rule_logging, write_csv, write_parquet
from knowprobe.models import load_tokenizer

with rule_logging(snakemake.log[0]):
    tokenizer = load_tokenizer(snakemake.input.model)
    facts = read_parquet(snakemake.input.facts)
    candidates = read_parquet(snakemake.input.candidates)
    kept, dropped = vocab.filter_facts(facts, tokenizer, candidates["token_id"])
    write_csv(dropped, snakemake.output.dropped)
    write_parquet(kept, snakemake.output.facts)
