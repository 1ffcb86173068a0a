"""Result tables rendered as Markdown and LaTeX (CSV is pandas' own), for every study.

Numbers are printed as the papers print them: floats with one decimal, missing values as "–".
"""

from __future__ import annotations

import pandas as pd


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
