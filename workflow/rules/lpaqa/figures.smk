# LPAQA's analyses and figures: part-of-speech patterns of the mined prompts (Table 11), and
# Figures 2-5 from the selection stage's results and the probe tables.


rule lpaqa_prompt_patterns:
    input:
        prompts=LPAQA_PROMPTS.format(prompt_set="mine"),
        lexicon=LPAQA["pos"]["lexicon"] or [],
        code=code("lpaqa/lpaqa_prompt_patterns"),
    output:
        "results/lpaqa/analysis/mine_patterns.csv",
    log:
        "logs/lpaqa/prompt_patterns.log",
    conda:
        "../../../envs/mining.yaml"
    params:
        spacy_model=LPAQA["mining"]["spacy_model"],
    script:
        "../../scripts/lpaqa/lpaqa_prompt_patterns.py"


rule lpaqa_paper_figures:
    input:
        unpack(paper_figures_input),
    output:
        **paper_figure_outputs(),
    log:
        "logs/lpaqa/paper_figures.log",
    conda:
        "../../../envs/lama.yaml"
    params:
        max_k=LPAQA["selection"]["max_k"],
        divergence_sets=DIVERGENCE_SETS,
        interpolation_set="mine",
        stand_ins=lpaqa_release_stand_ins(),
    script:
        "../../scripts/lpaqa/lpaqa_paper_figures.py"


localrules:
    lpaqa_prompt_patterns,
    lpaqa_paper_figures,
