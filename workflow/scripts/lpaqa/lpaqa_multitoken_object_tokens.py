"""Rule lpaqa_multitoken_object_tokens: one model's token count of each multi-token fact's object
(its tokenizer, the label after a space), a job a model so that adding a model touches no other."""

from knowprobe import contracts
from knowprobe.io import rule_logging
from knowprobe.lpaqa import multitoken
from knowprobe.models import load_tokenizer

with rule_logging(snakemake.log[0]) as log:
    facts = contracts.read(snakemake.input.facts, contracts.MULTITOKEN_FACTS)
    model = snakemake.wildcards.model
    tokens = multitoken.object_tokens(facts, {model: load_tokenizer(snakemake.input.model, snakemake.params.kind)})
    counts = tokens["obj_tokens"]
    log.info("%s: objects of one token %d, of several %d", model, (counts == 1).sum(), (counts > 1).sum())
    contracts.write(tokens, snakemake.output[0], contracts.OBJECT_TOKENS)
