"""Rule bear_import: a BEAR-format directory (and relation_info.json's domains, a download held to
its SHA-256) as the bear_relations and bear_instances tables, every record left out counted by file
and reason."""

from pathlib import Path

from knowprobe import contracts
from knowprobe.bear.dataset import read_dataset, verify_digest
from knowprobe.io import rule_logging, write_csv

with rule_logging(snakemake.log[0]) as log:
    if snakemake.input.relation_info and snakemake.params.relation_info_sha256:
        verify_digest(snakemake.input.relation_info, snakemake.params.relation_info_sha256, "bear.relation_info.sha256")
    directory = Path(snakemake.input.dataset)
    if snakemake.params.member:
        directory = directory / snakemake.params.member
    relations, instances, rejects = read_dataset(directory, snakemake.input.relation_info or None)
    if rejects["n"].sum():
        log.warning("%d records left out: %s", rejects["n"].sum(), rejects.to_dict("records"))
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
