"""Rule train_demo_model: a tiny language model for the offline demo, trained on the demo corpora
that the studies write (sentences with the object marked, and the words their probes will meet)."""

from knowprobe import contracts, demo_model
from knowprobe.io import read_lines, rule_logging

with rule_logging(snakemake.log[0]) as log:
    sentences, texts = [], []
    for path in snakemake.input.sentences:
        frame = contracts.read(path, contracts.DEMO_CORPUS)
        sentences += list(zip(frame["text"], frame["object_start"], frame["object_end"]))
    for path in snakemake.input.words:
        texts += read_lines(path)
    log.info("corpus: %d sentences from %d studies", len(sentences), len(snakemake.input.sentences))
    settings = demo_model.TinyLMSettings(**snakemake.params.settings)
    summary = demo_model.train(sentences, texts, snakemake.output[0], settings, kind=snakemake.params.kind)
    log.info("loss %.3f -> %.3f", summary["first_loss"], summary["final_loss"])
