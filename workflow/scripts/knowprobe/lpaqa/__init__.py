"""LPAQA (Jiang et al., How Can We Know What Language Models Know?, TACL 2020).

One module per stage of the study: ``lama`` (LAMA's facts and manual prompts), ``trex_train``
(training facts from Wikidata), ``wikipedia`` and ``distant`` (sentences that mention both ends of
a training fact), ``mining`` (middle-word and dependency-path prompts), ``paraphrase`` and
``demo_translator`` (back-translation), ``probe`` (candidate log-probs at the mask, through
:mod:`knowprobe.scoring`), ``metrics`` (P@1) and ``tables`` (the paper's tables).
"""
