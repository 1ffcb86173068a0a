"""S-TEST (Huang et al., Can Language Models Be Specific? How?, 2022).

One module per stage: ``builder`` (the benchmark from Wikidata's transitive relations),
``released`` (the authors' released files, for their exact pairs), ``prompts`` (vanilla, few-shot
and cascade prompts, and their naturalness forms), ``probe`` (the scores, through
:mod:`knowprobe.scoring`), ``metrics`` (p_r) and ``paper`` (the paper's tables beside ours).
"""
