"""Rule bear_demo_corpus: BEAR's part of the demo models' corpus: the demo set's facts written out
with corpus templates (a share held out), and the words its statements will meet."""

import pandas as pd

from knowprobe import contracts
from knowprobe.bear import corpus
from knowprobe.demo_model import read_corpus_templates
from knowprobe.io import rule_logging, write_text

with rule_logging(snakemake.log[0]) as log:
    relations = contracts.read(snakemake.input.relations, contracts.BEAR_RELATIONS)
    instances = contracts.read(snakemake.input.instances, contracts.BEAR_INSTANCES)
    templates = read_corpus_templates(snakemake.input.templates)
    rows, held_out = corpus.sentences(relations, instances, templates, snakemake.params.holdout, snakemake.params.seed)
    log.info("%d sentences; %d of %d facts held out", len(rows), len(held_out), len(instances))
    contracts.write(
        pd.DataFrame(rows, columns=contracts.DEMO_CORPUS.columns), snakemake.output.sentences, contracts.DEMO_CORPUS
    )
    write_text("\n".join(corpus.words(relations, instances)) + "\n", snakemake.output.words)
