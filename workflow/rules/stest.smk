# S-TEST (Huang et al., Can Language Models Be Specific? How?, 2022), a study slice: its rules
# (this file and workflow/rules/stest/), its package (knowprobe.stest), its config section
# (workflow/schemas/stest.schema.yaml), its report category, docs/stest.md and its tests.
#
#   Wikidata claims ─► paths over P131/P279/P361 (P19→P131, P106→P279) ─► triples ─┐
#   (or the authors' released files)                                              ├─► probe ─► p_r ─► tables, figures
#   LAMA's common vocab ─► words one token of every model ─► candidates ──────────┘   (VP, FP, CP; naturalness, relatedness)


include: "stest/common.smk"
include: "stest/benchmark.smk"
include: "stest/probe.smk"
include: "stest/tables.smk"
include: "stest/uncertainty.smk"


# the study's target: snakemake stest
rule stest:
    input:
        with_pages(stest_outputs()),


localrules:
    stest,


STUDY_OUTPUTS["stest"] = stest_outputs
STUDY_MODEL_NAMES["stest"] = STEST_MODELS
STUDY_HEADLINES["stest"] = [
    (
        "results/stest/tables/intervals.csv",
        "results/stest/tables/intervals.html",
        "knowprobe.stest.intervals",
    )
]
if STEST["demo_corpus"]["templates"] is not None:
    DEMO_CORPORA["stest"] = rules.stest_demo_corpus.output
