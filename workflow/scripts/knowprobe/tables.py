"""Result tables rendered as Markdown and LaTeX (CSV is pandas' own), for every study, and the
layout of a paper's table with each of our numbers beside the paper's.

Numbers are printed as the papers print them: floats with one decimal, missing values as "–".
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

FIELDS = ["ours", "paper", "difference"]  # every paper table's long form


def to_markdown(frame: pd.DataFrame, columns: list[str] | None = None) -> str:
    columns = columns or list(frame.columns)
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    for row in frame[columns].itertuples(index=False):
        # a cell's own "|" (a start token such as <|endoftext|>) escaped, so that it splits no column
        lines.append("| " + " | ".join(_cell(value).replace("|", "\\|") for value in row) + " |")
    return "\n".join(lines) + "\n"


def to_latex(frame: pd.DataFrame, columns: list[str] | None = None, caption: str = "") -> str:
    columns = columns or list(frame.columns)

    def escape(text):
        return str(text).replace("_", r"\_").replace("%", r"\%").replace("&", r"\&").replace("|", r"\textbar{}")

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


def write_table(outputs, name: str, long: pd.DataFrame, layout: pd.DataFrame, caption: str) -> None:
    """A result table as its rule's outputs ``{name}_csv``, ``{name}_md`` and ``{name}_tex``: the
    CSV in long form (one row per number, for programs), Markdown and LaTeX in ``layout`` (the
    paper's rows and columns, for people) under the caption."""
    from knowprobe.io import write_csv, write_text

    write_csv(long, outputs[f"{name}_csv"])
    write_text(f"{caption}\n\n" + to_markdown(layout), outputs[f"{name}_md"])
    write_text(to_latex(layout, caption=caption), outputs[f"{name}_tex"])


def _cell(value) -> str:
    if value is pd.NA:  # a missing integer (pandas' nullable Int64)
        return "–"
    if isinstance(value, float):
        return "–" if pd.isna(value) else f"{value:.1f}"
    return str(value)


def load_paper(path) -> dict:
    """A paper's numbers (resources/papers/STUDY.yaml)."""
    import yaml

    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def beside(ours, paper, decimals: int = 1) -> dict:
    """Ours (percent, to the paper's ``decimals``) beside the paper's number and the difference."""
    ours = round(float(ours), decimals) if ours is not None and pd.notna(ours) else float("nan")
    reported = float(paper) if paper is not None else float("nan")
    difference = round(ours - reported, decimals) if not (np.isnan(ours) or np.isnan(reported)) else float("nan")
    return {"ours": ours, "paper": reported, "difference": difference}


def cell(row, decimals: int = 1) -> str:
    """'ours (paper, difference)', 'ours' where the paper has no number, '–' where we have none;
    numbers with the paper's ``decimals`` (its own numbers are printed as it prints them, never
    rounded again: 48.25 stays 48.25)."""
    if pd.isna(row["ours"]):
        return "–" if pd.isna(row["paper"]) else f"– ({row['paper']:.{decimals}f})"
    if pd.isna(row["paper"]):
        return f"{row['ours']:.{decimals}f}"
    return f"{row['ours']:.{decimals}f} ({row['paper']:.{decimals}f}, {row['difference']:+.{decimals}f})"


def grid(long: pd.DataFrame, index: list[str], column: str, decimals: int = 1) -> pd.DataFrame:
    """The paper's layout: ``index`` columns, then one column per value of ``column`` in order of
    appearance, each cell 'ours (paper, difference)' with the paper's ``decimals``."""
    frame = long.assign(_cell=long.apply(cell, axis=1, decimals=decimals) if len(long) else [])
    order = list(dict.fromkeys(frame[column]))
    wide = frame.pivot_table(index=index, columns=column, values="_cell", aggfunc="first", sort=False)
    return wide.reindex(columns=order).fillna("–").reset_index().rename_axis(columns=None)


def read_markdown(text: str) -> tuple[str, pd.DataFrame]:
    """The caption (the text before the table) and the table of a Markdown file written by
    :func:`to_markdown`, cells as strings."""
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith("|")), len(lines))
    caption = "\n".join(lines[:start]).strip()
    rows = [line.strip().strip("|").split(" | ") for line in lines[start:] if line.startswith("|")]
    if len(rows) < 2:
        return caption, pd.DataFrame()
    header = [cell.strip() for cell in rows[0]]
    # rows[1] is the |---| rule; a cell's own "|" was escaped by to_markdown
    body = [[cell.strip().replace("\\|", "|") for cell in row] for row in rows[2:]]
    return caption, pd.DataFrame(body, columns=header)


PAGE_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; font-size: 13px;
       margin: 1em; color: #222; }
p.caption { max-width: 60em; line-height: 1.4; }
table { border-collapse: collapse; margin-top: 0.8em; }
th, td { padding: 0.2em 0.5em; border-bottom: 1px solid #ddd; }
th { background: #f3f4f6; text-align: left; position: sticky; top: 0; vertical-align: bottom; max-width: 10em; }
td { max-width: 16em; }
td.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.number span.paper { color: #666; font-size: 11px; }
tr:nth-child(even) td { background: #fafafa; }
p.note { color: #666; font-size: 12px; }
"""
# "ours (the paper's, difference)": the paper's part goes on a line of its own, which halves the
# width of a table of such cells (S-TEST's Table 5 at 1366 pixels wide)
BESIDE = re.compile(r"^(\S+) (\(.+\))$")


def is_number(cell: str) -> bool:
    head = cell.split(" (")[0].replace("%", "").replace("–", "").strip()
    try:
        float(head)
    except ValueError:
        return cell.strip() == "–"
    return True


def number_cell(text: str) -> str:
    import html

    beside = BESIDE.match(text)
    if beside is None:
        return f'<td class="number">{html.escape(text)}</td>'
    ours, paper = beside.groups()
    return f'<td class="number">{html.escape(ours)}<br><span class="paper">{html.escape(paper)}</span></td>'


def html_page(title: str, caption: str, frame: pd.DataFrame, note: str = "") -> str:
    """A table as a page of its own (the HTML report shows it in place): the caption, then the
    table, numbers right-aligned; ``note`` under it (where its data is)."""
    import html

    header = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for row in frame.itertuples(index=False):
        cells = [_cell(value) for value in row]
        rows.append(
            "<tr>" + "".join(number_cell(c) if is_number(c) else f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>"
        )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{PAGE_STYLE}</style></head><body>\n"
        f'<p class="caption">{html.escape(caption)}</p>\n'
        f"<table><thead><tr>{header}</tr></thead><tbody>\n"
        + "\n".join(rows)
        + "\n</tbody></table>\n"
        + (f'<p class="note">{html.escape(note)}</p>\n' if note else "")
        + "</body></html>\n"
    )


def left_out_note(by_model: dict[str, pd.DataFrame]) -> str:
    """The tables' note on what each model could not take: a sentence per model that left
    anything out after ". Left out per model ...", nothing where none did (the caption puts the
    last full stop)."""
    from .io import left_out_line

    lines = [f"{model} left out {left_out_line(rows)}" for model, rows in by_model.items() if len(rows)]
    return "" if not lines else ". Left out per model (it could not take them; the rest scored): " + ". ".join(lines)
