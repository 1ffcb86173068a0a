# LPAQA (Jiang et al., How Can We Know What Language Models Know?, TACL 2020), a study slice:
# its rules (this file and workflow/rules/lpaqa/), its package (knowprobe.lpaqa), its config
# section (workflow/schemas/lpaqa.schema.yaml), its report category, docs/lpaqa.md and its tests.
#
#   LAMA data.zip ─► facts (T-REx, Google-RE test) ─┐          Wikidata ─► T-REx-train (train split)
#   common vocab ─► candidates per model ─► filter ─┼─► probe ─► P@1 ─► tables, figures
#   manual, mined (Wikipedia) and paraphrased prompts┘


include: "lpaqa/common.smk"
include: "lpaqa/lama.smk"
include: "lpaqa/vocab.smk"
include: "lpaqa/trex_train.smk"
include: "lpaqa/multitoken.smk"
include: "lpaqa/wikipedia.smk"
include: "lpaqa/mining.smk"
include: "lpaqa/probe.smk"
include: "lpaqa/selection.smk"
include: "lpaqa/paraphrase.smk"
include: "lpaqa/refine.smk"
include: "lpaqa/release.smk"
include: "lpaqa/pararel.smk"
include: "lpaqa/tables.smk"
include: "lpaqa/figures.smk"
include: "lpaqa/uncertainty.smk"


# the study's target: snakemake lpaqa
rule lpaqa:
    input:
        with_pages(lpaqa_outputs()),


localrules:
    lpaqa,


# what rule all asks for when lpaqa is in `studies`, and LPAQA's part of the demo models' corpus
STUDY_OUTPUTS["lpaqa"] = lpaqa_outputs
STUDY_MODEL_NAMES["lpaqa"] = LPAQA_PROBED
# the intervals where the run selects prompts (they are computed over its results), else the
# manual prompts' baseline: a run without T-REx-train has no interval, and its numbers still head
# the report
STUDY_HEADLINES["lpaqa"] = [
    (
        ("results/lpaqa/tables/intervals.csv", "results/lpaqa/tables/intervals.html", "knowprobe.lpaqa.intervals")
        if LPAQA["trex_train"]["source"] != "none"
        else ("results/lpaqa/tables/baseline.csv", "results/lpaqa/tables/baseline.html", "knowprobe.lpaqa.tables")
    )
]
DEMO_CORPORA["lpaqa"] = rules.lpaqa_demo_corpus.output


# a dry run says what each score of each run it probes costs (docs/lpaqa.md, Scores)
PLANNED_COST_PRINTERS.append(print_lpaqa_score_costs)
PLANNED_COST_PRINTERS.append(print_multitoken_costs)
