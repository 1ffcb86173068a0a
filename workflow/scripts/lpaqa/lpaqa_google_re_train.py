"""Rule lpaqa_google_re_train: the train_dev split of Google-RE, from T-REx-train's facts of the
relations Google-RE's map to (``trex_train.google_re_train``)."""

from knowprobe import contracts
from knowprobe.io import rule_logging
from knowprobe.lpaqa import trex_train

with rule_logging(snakemake.log[0]):
    facts = contracts.read(snakemake.input.facts, contracts.FACTS)
    test = contracts.read(snakemake.input.test, contracts.FACTS)
    train = trex_train.google_re_train(facts, test, dict(snakemake.params.relations))
    contracts.write(train, snakemake.output[0], contracts.FACTS)
