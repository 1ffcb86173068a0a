"""Rule lpaqa_candidate_words: the candidate word list (LAMA's common vocabulary, or its intersection over models)."""

from knowprobe import vocab
from knowprobe.io import rule_logging, write_text
from knowprobe.models import load_tokenizer

with rule_logging(snakemake.log[0]) as log:
    common = vocab.read_words(snakemake.input.common)
    mode = snakemake.params.mode
    if mode == "model":
        words = common  # unused: each model's candidates are its whole vocabulary
    else:
        tokenizers = {}
        if mode == "intersection":
            tokenizers = {
                name: load_tokenizer(path, kind)
                for name, path, kind in zip(snakemake.params.models, snakemake.input.models, snakemake.params.kinds)
            }
        words = vocab.candidate_words(common, mode, tokenizers)
    log.info("%d candidate words (mode %s)", len(words), mode)
    write_text("\n".join(words) + "\n", snakemake.output[0])
