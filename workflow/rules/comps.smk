# COMPS (Misra, Rayz and Ettinger, EACL 2023), a study slice: its rules (this file and
# workflow/rules/comps/), its package (knowprobe.comps), its config section
# (workflow/schemas/comps.schema.yaml), its report category, docs/comps.md and its tests.
#
#   XCSLB norms ─┬─► concepts, their WordNet senses ─► similarities ─► negatives ─► BASE, WUGS, WUGS-DIST ─┐
#   WordNet 3.0 ─┤   (Wu-Palmer, Jaccard, GloVe cosine)                 (or the authors' released files)  ├─► scores ─► accuracy tables, figures
#   GloVe ───────┘                                                                                    models ┘


include: "comps/common.smk"
include: "comps/stimuli.smk"
include: "comps/probe.smk"
include: "comps/tables.smk"
include: "comps/uncertainty.smk"


# the study's target: snakemake comps
rule comps:
    input:
        with_pages(comps_outputs()),


localrules:
    comps,


STUDY_OUTPUTS["comps"] = comps_outputs
STUDY_MODEL_NAMES["comps"] = COMPS_MODELS
STUDY_HEADLINES["comps"] = [
    (
        "results/comps/tables/intervals.csv",
        "results/comps/tables/intervals.html",
        "knowprobe.comps.intervals",
    )
]
if COMPS["demo_corpus"]["enabled"]:
    DEMO_CORPORA["comps"] = rules.comps_demo_corpus.output
