"""Rule lpaqa_candidate_ids: a model's candidate token ids (word, token_id)."""

from knowprobe import contracts, vocab
from knowprobe.io import rule_logging
from knowprobe.models import load_tokenizer

with rule_logging(snakemake.log[0]) as log:
    tokenizer = load_tokenizer(snakemake.input.model, snakemake.params.kind)
    words = None if snakemake.params.mode == "model" else vocab.read_words(snakemake.input.words)
    candidates = vocab.candidate_table(tokenizer, words)
    left_out = "" if words is None else f" of {len(words)} words ({len(words) - len(candidates)} left out)"
    log.info("%d candidates%s", len(candidates), left_out)
    contracts.write(candidates, snakemake.output[0], contracts.CANDIDATES)
