"""Result tables as CSV, Markdown and LaTeX.

``per_relation`` rows are ``model, prompt_set, method, dataset, relation, n_facts,
n_objects, micro, macro``; the summary averages them over relations and lays the
datasets side by side, one row per (model, method), in percent as the papers print them.
"""

from __future__ import annotations

import pandas as pd

from .io import KnowprobeError
from .metrics import average_over_relations

PER_RELATION_COLUMNS = [
    "model",
    "prompt_set",
    "method",
    "dataset",
    "relation",
    "n_facts",
    "n_objects",
    "micro",
    "macro",
]
DATASET_NAMES = {"trex": "T-REx", "google_re": "Google-RE"}
METHOD_ORDER = ["Majority", "Man"]


def single_prompt_results(per_prompt: pd.DataFrame, method: str) -> pd.DataFrame:
    """Per-relation results of a prompt set that has one prompt per relation (e.g. Man)."""
    counts = per_prompt.groupby("relation")["prompt_id"].nunique()
    several = counts[counts > 1]
    if len(several):
        raise KnowprobeError(
            f"method {method}: relation {several.index[0]} has {several.iloc[0]} prompts; "
            f"a single-prompt method needs exactly one"
        )
    return per_prompt.drop(columns=["prompt_id", "template"]).assign(method=method)


def dataset_order(dataset: str) -> int:
    """Known datasets in DATASET_NAMES's order, any other after them."""
    names = list(DATASET_NAMES)
    return names.index(dataset) if dataset in names else len(names)


def summary(per_relation: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, method); for each dataset micro and macro P@1 (%), relations and facts."""
    averaged = average_over_relations(per_relation, keys=["model", "method", "dataset"])
    rows = []
    for (model, method), group in averaged.groupby(["model", "method"], sort=False):
        row = {"model": model, "method": method}
        group = group.sort_values("dataset", key=lambda d: d.map(dataset_order))
        for item in group.itertuples():
            name = DATASET_NAMES.get(item.dataset, item.dataset)
            row[f"{name} micro"] = round(100 * item.micro, 1)
            row[f"{name} macro"] = round(100 * item.macro, 1)
            row[f"{name} relations"] = item.n_relations
            row[f"{name} facts"] = item.n_facts
        rows.append(row)
    frame = pd.DataFrame(rows)
    order = {method: i for i, method in enumerate(METHOD_ORDER)}
    frame["_order"] = frame["method"].map(lambda m: order.get(m, len(order)))
    return frame.sort_values(["model", "_order", "method"], kind="stable").drop(columns="_order").reset_index(drop=True)


def score_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if c.endswith((" micro", " macro"))]


def to_markdown(frame: pd.DataFrame, columns: list[str] | None = None) -> str:
    columns = columns or list(frame.columns)
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    for row in frame[columns].itertuples(index=False):
        lines.append("| " + " | ".join(_cell(value) for value in row) + " |")
    return "\n".join(lines) + "\n"


def to_latex(frame: pd.DataFrame, columns: list[str] | None = None, caption: str = "") -> str:
    columns = columns or list(frame.columns)

    def escape(text):
        return str(text).replace("_", r"\_").replace("%", r"\%").replace("&", r"\&")

    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\begin{tabular}{" + "l" * 2 + "r" * (len(columns) - 2) + "}",
        r"\toprule",
        " & ".join(escape(c) for c in columns) + r" \\",
        r"\midrule",
    ]
    for row in frame[columns].itertuples(index=False):
        lines.append(" & ".join(escape(_cell(value)) for value in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption:
        lines.append(r"\caption{" + escape(caption) + "}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def _cell(value) -> str:
    if isinstance(value, float):
        return "–" if pd.isna(value) else f"{value:.1f}"
    return str(value)
