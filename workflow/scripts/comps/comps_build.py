"""Rule comps_build: COMPS's minimal pairs from the norms: four negatives for every positive, then
the BASE, WUGS and WUGS-DIST stimuli."""

from knowprobe import contracts
from knowprobe.comps import builder, norms
from knowprobe.io import KnowprobeError, rule_logging, write_csv

with rule_logging(snakemake.log[0]) as log:
    settings = snakemake.params.build
    world = norms.read_norms(snakemake.input.norms)
    concepts = contracts.read(snakemake.input.concepts, contracts.COMPS_CONCEPTS)
    similarity = contracts.read(snakemake.input.similarity, contracts.COMPS_SIMILARITY)
    pairs, rejects = builder.draw_pairs(world.features, similarity, settings["positives"], settings["seed"])
    if pairs.empty:
        raise KnowprobeError(
            f"{snakemake.input.norms}: no minimal pair could be drawn ({rejects['reason'].value_counts().to_dict()})"
        )
    if rejects["n"].sum():
        log.warning("negatives not found: %s", rejects.groupby("reason")["n"].sum().to_dict())
    stimuli = builder.stimuli(pairs, concepts, settings["nonce_words"], settings["seed"])
    counts = stimuli["subset"].value_counts().to_dict()
    log.info("%d pairs over %d properties: %s", len(pairs), pairs["property"].nunique(), counts)
    if not counts.get("wugs"):
        log.warning("no positive concept is an animal: COMPS-WUGS and WUGS-DIST are empty")
    contracts.write(stimuli, snakemake.output.stimuli, contracts.COMPS_STIMULI)
    write_csv(rejects, snakemake.output.rejects)
