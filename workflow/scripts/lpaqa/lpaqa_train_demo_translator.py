"""Rule lpaqa_train_demo_translator: a tiny denoising copy model standing in for a translation model offline."""

from knowprobe import contracts, demo_model
from knowprobe.io import rule_logging
from knowprobe.lpaqa import demo_translator, paraphrase

with rule_logging(snakemake.log[0]) as log:
    settings = dict(snakemake.params.settings)
    subject, obj = snakemake.params.stand_ins
    stand_ins = paraphrase.ParaphraseSettings(subject_stand_in=subject, object_stand_in=obj)
    # the texts the paraphrase stage will send through it: templates with the stand-ins in the slots
    templates = list(demo_model.read_corpus_templates(snakemake.input.corpus_templates)["template"])
    templates += list(contracts.read(snakemake.input.prompts, contracts.PROMPTS)["template"])
    texts = [text for text in (paraphrase.to_source(t, stand_ins) for t in templates) if text is not None]
    train_settings = demo_translator.TinyTranslatorSettings(
        **{k: v for k, v in settings.items() if k != "corpus_templates"}
    )
    summary = demo_translator.train(texts, snakemake.output[0], train_settings, threads=snakemake.threads)
    log.info(
        "%d texts, vocabulary %d, loss %.3f -> %.3f",
        summary["texts"],
        summary["vocabulary"],
        summary["first_loss"],
        summary["final_loss"],
    )
