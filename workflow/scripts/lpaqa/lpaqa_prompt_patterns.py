"""Rule lpaqa_prompt_patterns: the part-of-speech pattern (ReVerb's, LPAQA Table 11) of every mined
prompt, tagged by a spaCy pipeline or from a word -> tag lexicon."""

from knowprobe import contracts
from knowprobe.io import rule_logging, write_csv
from knowprobe.lpaqa import pos

with rule_logging(snakemake.log[0]) as log:
    prompts = contracts.read(snakemake.input.prompts, contracts.PROMPTS)
    if snakemake.input.lexicon:
        lexicon = pos.read_lexicon(snakemake.input.lexicon)
        log.info("tags from the lexicon %s (%d words)", snakemake.input.lexicon, len(lexicon))
        tagged = pos.tag_prompts(prompts, lexicon=lexicon)
        unknown = sorted(
            {
                w
                for words, tags in zip(tagged["middle"], tagged["tags"])
                for w, t in zip(words.split(), tags.split())
                if t == "X"
            }
        )
        if unknown:
            log.warning("%d words are not in the lexicon and tagged X: %s", len(unknown), ", ".join(unknown[:20]))
    else:
        from knowprobe.lpaqa.mining import load_spacy

        log.info("tags from the spaCy pipeline %s", snakemake.params.spacy_model)
        tagged = pos.tag_prompts(prompts, nlp=load_spacy(snakemake.params.spacy_model))
    counts = tagged["pattern"].value_counts()
    log.info("%d prompts: %s", len(tagged), ", ".join(f"{k} {v}" for k, v in counts.items()))
    write_csv(tagged, snakemake.output[0])
