"""Rule stest_candidate_words: the words of the common vocabulary that are one token of every
model S-TEST probes (the paper's shared vocabulary, about 18,000 words for its five models)."""

from knowprobe import vocab
from knowprobe.io import rule_logging, write_text
from knowprobe.models import load_tokenizer

with rule_logging(snakemake.log[0]) as log:
    common = vocab.read_words(snakemake.input.common)
    tokenizers = {
        name: load_tokenizer(path, kind)
        for name, path, kind in zip(snakemake.params.models, snakemake.input.models, snakemake.params.kinds)
    }
    words = vocab.candidate_words(common, "intersection", tokenizers)
    log.info("%d of %d common words are one token of all %d models", len(words), len(common), len(tokenizers))
    write_text("\n".join(words) + "\n", snakemake.output[0])
