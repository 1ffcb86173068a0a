"""How the uncertainty layer's rows read in a study's tables: ``value [low, high]`` cells, percent,
and the paired comparisons for people."""

from __future__ import annotations


def in_percent(table, keys: list[str], value: str, clusters: str, items: str):
    """``interval_rows``' table under a study's own names: ``keys``, the value (as ``value``) with
    ``low`` and ``high`` in percent, the clusters and items counted (as ``clusters`` and ``items``:
    relations and facts, properties and pairs) and the ``note``."""
    return table[keys].assign(
        **{
            value: 100 * table["value"],
            "low": 100 * table["low"],
            "high": 100 * table["high"],
            clusters: table["clusters"],
            items: table["items"],
            "note": table["note"],
        }
    )


def cell(value: float, low: float, high: float, digits: int = 1) -> str:
    """``value [low, high]``, or the value alone where there is no interval."""
    if low != low:  # NaN
        return f"{value:.{digits}f}"
    return f"{value:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def comparison_layout(summary, cluster_name: str = "clusters"):
    """The comparisons for people: A, B, (dataset), "A - B (points)" as value [low, high], the
    clusters, and the three counts."""
    import pandas as pd

    if summary.empty:
        return summary
    out = {"A": summary["A"], "B": summary["B"]}
    if (summary["dataset"] != "").any():
        out["dataset"] = summary["dataset"]
    out["A - B (points)"] = [cell(r.difference, r.low, r.high) for r in summary.itertuples()]
    out[cluster_name] = summary["clusters"]
    for column in ("A better", "no difference", "B better"):
        out[column] = summary[column]
    return pd.DataFrame(out)
