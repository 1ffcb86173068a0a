"""Rule stest_figures: p_r per relation and prompting method for each model (grouped bars, the
50% line of no preference), and average naturalness against average specificity (ours, and the
paper's five models as hollow markers)."""

import pandas as pd

from knowprobe import figures
from knowprobe.io import rule_logging
from knowprobe.stest.paper import model_rows, relation_label, relations_of
from knowprobe.tables import load_paper

METHOD_NAMES = {"VP": "vanilla", "FP": "few-shot", "CP": "cascade"}

with rule_logging(snakemake.log[0]) as log:
    pr = pd.read_csv(snakemake.input.pr)
    numbers = load_paper(snakemake.input.paper)
    spec = pr[pr["measure"] == "specificity"]
    panels = [(model, mode) for model, mode in dict.fromkeys(zip(spec["model"], spec["mode"]))]
    fig, axes = figures.new(len(panels), width=max(4.0, 3.6 * len(panels)), height=3.4, sharey=True)
    for ax, (model, mode) in zip(axes, panels):
        part = spec[(spec["model"] == model) & (spec["mode"] == mode)]
        relations = relations_of(part, numbers)
        groups = {
            method: [part[(part["method"] == method) & (part["relation"] == r)]["p_r"].mean() for r in relations]
            for method in ("VP", "FP", "CP")
        }
        labels = [relation_label(r, numbers).split(" (")[0] for r in relations]
        figures.grouped_bars(ax, labels, groups, "p_r (%)", reference=50, reference_label="no preference")
        ax.set_title(model if mode in ("mask", "next_token") else f"{model} ({mode})")
        ax.set_ylim(0, 118)  # room above 100% for the legend, in one row
        ax.set_yticks(range(0, 101, 20))
        ax.legend(fontsize=7, ncol=4, loc="upper center", handlelength=1.2, columnspacing=0.8)
    figures.save(fig, snakemake.output.png, snakemake.output.svg)

    fig, (ax,) = figures.new(1, width=7.0, height=4.0)
    average = pr[pr["relation"] == "Average"]
    markers = {"VP": "o", "FP": "s", "CP": "^"}
    for i, (model, mode) in enumerate(panels):
        color = figures.COLORS[i % len(figures.COLORS)]
        for method, marker in markers.items():
            pick = (average["model"] == model) & (average["mode"] == mode) & (average["method"] == method)
            nat = average[pick & (average["measure"] == "naturalness")]["p_r"]
            spe = average[pick & (average["measure"] == "specificity")]["p_r"]
            if len(nat) and len(spe):
                label = f"{model}{'' if mode in ('mask', 'next_token') else f' ({mode})'}" if method == "VP" else None
                ax.scatter(nat.iloc[0], spe.iloc[0], marker=marker, color=color, label=label, s=30, alpha=0.8, zorder=3)
    for row in model_rows({}, numbers):
        reported = numbers["table6"]["models"][row.paper]
        for method, marker in markers.items():
            ax.scatter(
                reported[f"Naturalness w/ {method}"],
                reported[f"Specificity w/ {method}"],
                marker=marker,
                facecolors="none",
                edgecolors="gray",
                s=30,
                zorder=2,
            )
    ax.scatter([], [], marker="o", facecolors="none", edgecolors="gray", label="paper (Table 6)")
    # the marker key as legend entries (it was squeezed into the x label)
    for method, marker in markers.items():
        ax.scatter([], [], marker=marker, color="black", s=30, label=f"{method} ({METHOD_NAMES[method]})")
    ax.axhline(50, color="black", linewidth=0.8, linestyle="--")
    ax.axvline(50, color="black", linewidth=0.8, linestyle="--")
    ax.set_xlabel("naturalness p_r (%)")
    ax.set_ylabel("specificity p_r (%)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))  # beside the axes: no point hidden
    figures.save(fig, snakemake.output.naturalness_png, snakemake.output.naturalness_svg)
    log.info("figures of %d model rows", len(panels))
