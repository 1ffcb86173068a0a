"""Rule stest_candidate_ids: a model's token id of each shared candidate word (word, token_id)."""

from knowprobe import contracts, vocab
from knowprobe.io import rule_logging
from knowprobe.models import load_tokenizer

with rule_logging(snakemake.log[0]) as log:
    tokenizer = load_tokenizer(snakemake.input.model, snakemake.params.kind)
    candidates = vocab.candidate_table(tokenizer, vocab.read_words(snakemake.input.words))
    log.info("%d candidates", len(candidates))
    contracts.write(candidates, snakemake.output[0], contracts.CANDIDATES)
