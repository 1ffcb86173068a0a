"""Rule train_demo_model: the demo's tiny masked LM, trained offline from the benchmark facts."""

import pandas as pd

from knowprobe import demo_model
from knowprobe.io import read_parquet, rule_logging
from knowprobe.prompts import OBJECT, SUBJECT
from knowprobe.vocab import read_words

with rule_logging(snakemake.log[0]) as log:
    settings = dict(snakemake.params.settings)
    facts = pd.concat([read_parquet(path) for path in snakemake.input.facts], ignore_index=True)
    templates = demo_model.read_corpus_templates(snakemake.input.corpus_templates)
    sentences, held_out = demo_model.corpus(facts, templates, settings["holdout"], settings["seed"])
    log.info(
        "corpus: %d sentences from %d facts; %d facts held out",
        len(sentences),
        facts["fact_id"].nunique() - len(held_out),
        len(held_out),
    )
    # every word the probe will meet gets its own token: labels, candidates, prompt words
    prompts = read_parquet(snakemake.input.prompts)
    vocab_texts = (
        list(facts["sub_label"])
        + list(facts["obj_label"])
        + read_words(snakemake.input.vocab)
        + [t.replace(SUBJECT, " ").replace(OBJECT, " ") for t in prompts["template"]]
    )
    train_settings = demo_model.TinyLMSettings(**{k: v for k, v in settings.items() if k != "corpus_templates"})
    summary = demo_model.train(
        sentences,
        vocab_texts,
        snakemake.output[0],
        train_settings,
        threads=snakemake.threads,
        notes={"held_out_fact_ids": sorted(held_out)},
    )
    log.info("loss %.3f -> %.3f", summary["first_loss"], summary["final_loss"])
