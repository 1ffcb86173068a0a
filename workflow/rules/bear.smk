# BEAR (Wiland, Ploner and Akbik, Findings of NAACL 2024; the lm-pub-quiz library), a study slice:
# its rules (this file and workflow/rules/bear/), its package (knowprobe.bear), its config section
# (workflow/schemas/bear.schema.yaml), its report category, docs/bear.md and its tests.
#
#   BEAR's repository (or a local BEAR-format directory) ─► relations, instances ─┐
#   relation_info.json (domains) ─────────────────────────────────────────────────┤
#                                           models ─► statement scores ───────────┴─► accuracy tables, figure,
#                                                                                     intervals, comparisons


include: "bear/common.smk"
include: "bear/dataset.smk"
include: "bear/probe.smk"
include: "bear/tables.smk"
include: "bear/uncertainty.smk"


# the study's target: snakemake bear
rule bear:
    input:
        with_pages(bear_outputs()),


localrules:
    bear,


STUDY_OUTPUTS["bear"] = bear_outputs
STUDY_MODEL_NAMES["bear"] = BEAR_MODELS
STUDY_HEADLINES["bear"] = [
    (
        "results/bear/tables/intervals.csv",
        "results/bear/tables/intervals.html",
        "knowprobe.bear.intervals",
    )
]
if BEAR["demo_corpus"]["enabled"]:
    DEMO_CORPORA["bear"] = rules.bear_demo_corpus.output
