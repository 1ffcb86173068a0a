"""Rule bear_import: a BEAR-format directory as the bear_relations and bear_instances tables,
every record left out counted by file and reason (relation_info.json's domains are the tables')."""

from pathlib import Path

from knowprobe import contracts
from knowprobe.bear.dataset import read_dataset, sample_instances
from knowprobe.io import rule_logging, write_csv

with rule_logging(snakemake.log[0]) as log:
    directory = Path(snakemake.input.dataset)
    if snakemake.params.member:
        directory = directory / snakemake.params.member
    relations, instances, rejects = read_dataset(directory)
    if snakemake.params.per_relation is not None:
        total = len(instances)
        instances = sample_instances(instances, snakemake.params.per_relation, snakemake.params.seed)
        log.info(
            "a seeded sample (bear.per_relation %d, seed %d): %d of %d instances",
            snakemake.params.per_relation,
            snakemake.params.seed,
            len(instances),
            total,
        )
    for left_out, part in rejects.groupby("left_out", sort=True):
        what = "left out" if left_out else "counted and kept"
        log.warning("%d records %s: %s", part["n"].sum(), what, part.drop(columns="left_out").to_dict("records"))
    log.info(
        "%d relations, %d instances, %d templates, answer spaces of %d to %d",
        len(relations),
        len(instances),
        int(relations["templates"].map(len).sum()),
        int(relations["answer_space_labels"].map(len).min()),
        int(relations["answer_space_labels"].map(len).max()),
    )
    contracts.write(relations, snakemake.output.relations, contracts.BEAR_RELATIONS)
    contracts.write(instances, snakemake.output.instances, contracts.BEAR_INSTANCES)
    write_csv(rejects, snakemake.output.rejects)
