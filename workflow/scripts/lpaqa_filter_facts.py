"""Rule lpaqa_filter_facts: LAMA's filter for one model and dataset split; kept facts and drop counts."""

from knowprobe import contracts, vocab
from knowprobe.io import rule_logging, write_csv
from knowprobe.models import load_tokenizer

with rule_logging(snakemake.log[0]):
    tokenizer = load_tokenizer(snakemake.input.model, "masked")
    facts = contracts.read(snakemake.input.facts, contracts.FACTS)
    candidates = contracts.read(snakemake.input.candidates, contracts.CANDIDATES)
    kept, dropped = vocab.filter_facts(facts, tokenizer, candidates["token_id"])
    write_csv(dropped, snakemake.output.dropped)
    contracts.write(kept, snakemake.output.facts, contracts.MODEL_FACTS)
