"""Rule comps_similarity: each concept of the norms with its WordNet sense and GloVe vector, and
the taxonomic, property-overlap and co-occurrence similarity of every pair of concepts."""

import pandas as pd

from knowprobe import contracts
from knowprobe.comps import builder, norms, vectors, wordnet
from knowprobe.io import rule_logging, write_csv

with rule_logging(snakemake.log[0]) as log:
    world = norms.read_norms(snakemake.input.norms)
    taxonomy = wordnet.read_taxonomy(snakemake.input.wordnet)
    found = vectors.concept_vectors(snakemake.input.glove, snakemake.params.member, world.concepts["concept"])
    concepts = builder.concept_table(world, taxonomy, found, snakemake.params.animal_sense)
    if taxonomy.synset(snakemake.params.animal_sense) is None:
        log.warning("the animal sense %s is not in WordNet: COMPS-WUGS will be empty", snakemake.params.animal_sense)
    rejects = world.rejects.copy()
    for missing, reason, description in (
        (
            concepts["synset"] < 0,
            "sense_not_in_wordnet",
            "a concept whose sense key WordNet lacks: no taxonomic similarity",
        ),
        (~concepts["has_vector"], "no_vector", "a concept with a word GloVe lacks: no co-occurrence similarity"),
    ):
        if missing.any():
            log.warning(
                "%d concepts: %s (%s)", missing.sum(), description, ", ".join(concepts.loc[missing, "concept"][:10])
            )
            rejects.loc[len(rejects)] = ["concepts", reason, description, int(missing.sum())]
    log.info(
        "%d concepts (%d animals), %d concept-property pairs over %d properties",
        len(concepts),
        concepts["is_animal"].sum(),
        len(world.features),
        world.features["feature"].nunique(),
    )
    log.info("taxonomic similarity: %s Wu-Palmer", snakemake.params.taxonomic_measure)
    similarity = builder.similarity_table(world, concepts, taxonomy, found, snakemake.params.taxonomic_measure)
    contracts.write(concepts, snakemake.output.concepts, contracts.COMPS_CONCEPTS)
    contracts.write(similarity, snakemake.output.similarity, contracts.COMPS_SIMILARITY)
    write_csv(pd.DataFrame(rejects), snakemake.output.rejects)
