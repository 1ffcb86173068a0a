"""Numbers with their uncertainty, for every study: cluster bootstrap intervals, paired
comparisons (paired bootstrap, McNemar's exact test, Holm's correction), paraphrase consistency
(ParaRel's definition) and calibration (ECE, Brier, the answer-space prior, temperature scaling).

Pure, vectorised NumPy functions; a study hands them cluster ids (relations, properties) and
per-item values (a fact's correctness, a paired difference), B and a seed, and gets numbers back.
No function here knows a study.

One module per subject, each read and tested on its own:

- ``bootstrap``: the two-stage cluster bootstrap and its intervals (micro, pooled, macro), the
  resampling shared by a table's rows on the same items, and a table's rows with their intervals;
- ``paired``: paired comparisons (the paired bootstrap, McNemar's exact test, Holm's correction)
  and a table of them;
- ``consistency``: paraphrase consistency (ParaRel's definition; ParaRel's article rule);
- ``calibration``: ECE and reliability, Brier, the answer-space prior, temperature scaling;
- ``formatting``: how those rows read in a table (``value [low, high]`` cells, percent).

Here: ``Settings``, the config's ``uncertainty`` section every subject takes, and its defaults.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_B = 10_000
MIN_CLUSTERS = 5


@dataclass(frozen=True)
class Settings:
    """The config's ``uncertainty`` section, which every subject takes: the bootstrap's B, seed and
    fewest clusters for an interval, the paired tests' alpha, the calibration's bins."""

    bootstrap: int = DEFAULT_B
    seed: int = 0
    min_clusters: int = MIN_CLUSTERS
    alpha: float = 0.05
    bins: int = 10
