"""Rule stest_import_released: the authors' released triples, every bad line counted."""

from knowprobe import contracts
from knowprobe.io import rule_logging, write_csv
from knowprobe.stest.released import read_release, sample

with rule_logging(snakemake.log[0]) as log:
    triples, rejects = read_release(snakemake.input.release, snakemake.params.relations)
    if rejects["n"].sum():
        log.warning("%d released lines left out: %s", rejects["n"].sum(), rejects.to_dict("records"))
    if snakemake.params.per_relation is not None:
        before = len(triples)
        triples = sample(triples, snakemake.params.per_relation, snakemake.params.seed)
        log.info(
            "a sample of the release: at most %d subjects per relation (seed %d), %d of %d triples",
            snakemake.params.per_relation,
            snakemake.params.seed,
            len(triples),
            before,
        )
    contracts.write(triples, snakemake.output.triples, contracts.STEST_TRIPLES)
    write_csv(rejects, snakemake.output.rejects)
