"""LPAQA's analyses of prompts (section 5.3): prediction divergence against edit distance
(Figure 3) and the train rank of prompts by part-of-speech pattern (Figure 4).

Divergence of two prompts of a relation: the share of its facts that one prompt gets right and
the other wrong, Div(t_i, t_j) = sum over facts of [C(x, y, t_i) != C(x, y, t_j)] / |R|. Edit
distance: word-level Levenshtein distance between the two templates, normalised per relation into
[0, 1] by the largest distance between two of its prompts, and binned in five 0.2 intervals.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

BIN_EDGES = np.array([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
BIN_LABELS = ["[0, 0.2)", "[0.2, 0.4)", "[0.4, 0.6)", "[0.6, 0.8)", "[0.8, 1]"]
TOP_RANKS = 30  # Figure 4 looks at the prompts ranked within the top 30 of their relation


def words(template: str) -> list[str]:
    return template.split()


def edit_distance(a: list[str], b: list[str]) -> int:
    """Word-level Levenshtein distance (insertions, deletions and substitutions of one word)."""
    previous = list(range(len(b) + 1))
    for i, word in enumerate(a, start=1):
        current = [i]
        for j, other in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (word != other)))
        previous = current
    return previous[-1]


def divergence_pairs(relation: str, templates: list[str], right: np.ndarray) -> pd.DataFrame:
    """Every pair of a relation's prompts with their edit distance (raw and normalised) and
    their prediction divergence; ``right[prompt, fact]`` says which prompt gets which fact right."""
    columns = ["relation", "prompt_a", "prompt_b", "edit_distance", "normalized", "divergence"]
    pairs = list(itertools.combinations(range(len(templates)), 2))
    if not pairs or right.shape[1] == 0:
        return pd.DataFrame(columns=columns)
    first, second = map(np.array, zip(*pairs))
    distance = np.array([edit_distance(words(templates[a]), words(templates[b])) for a, b in pairs])
    divergence = (right[first] != right[second]).mean(axis=1)
    largest = distance.max()
    normalized = distance / largest if largest else np.zeros(len(distance))
    return pd.DataFrame(
        {
            "relation": relation,
            "prompt_a": [templates[a] for a in first],
            "prompt_b": [templates[b] for b in second],
            "edit_distance": distance,
            "normalized": normalized,
            "divergence": divergence,
        },
        columns=columns,
    )


def distance_bin(normalized: np.ndarray) -> np.ndarray:
    """The bin label of each normalised distance (the last bin closed: 1.0 falls in it)."""
    index = np.clip(np.searchsorted(BIN_EDGES, normalized, side="right") - 1, 0, len(BIN_LABELS) - 1)
    return np.array(BIN_LABELS)[index]


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r (NaN when either side is constant or there are fewer than two points)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2 or x.std() == 0 or y.std() == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def ranks_by_pattern(patterns: pd.DataFrame, ranked: pd.DataFrame) -> pd.DataFrame:
    """Figure 4's points: each prompt ranked within the top 30 of its relation on T-REx-train
    (``train_rank`` of the selection stage), with its part-of-speech pattern."""
    joined = ranked.merge(patterns[["relation", "template", "pattern", "tags"]], on=["relation", "template"])
    return joined[joined["train_rank"] < TOP_RANKS].reset_index(drop=True)
