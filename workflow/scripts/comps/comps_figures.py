"""Rule comps_figures: accuracy against parameter count per subset (a colour per subset, a marker
per model family, the chance line), and
accuracy by negative-sample type per model."""

import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from knowprobe import figures
from knowprobe.comps.metrics import CHANCE
from knowprobe.comps.tables import SUBSET_NAMES
from knowprobe.io import rule_logging

MARKER_SIZE = 4  # points

with rule_logging(snakemake.log[0]) as log:
    families = pd.read_csv(snakemake.input.families)
    subsets = [name for name in SUBSET_NAMES.values() if name in families.columns]
    fig, (ax,) = figures.new(width=7.2, height=3.8)
    # a colour per subset, a marker per family; a line joins the sizes of one family only
    markers = dict(zip(dict.fromkeys(families["family"]), "osD^vP*X"))
    series = []  # (colour, marker, parameters, accuracies) per subset and family
    for i, subset in enumerate(subsets):
        color = figures.COLORS[i % len(figures.COLORS)]
        for family, rows in families.dropna(subset=[subset]).groupby("family", sort=False):
            rows = rows.sort_values("parameters_millions")
            series.append((color, markers[family], list(rows["parameters_millions"]), list(rows[subset])))
    handles = [Line2D([], [], color=figures.COLORS[i % len(figures.COLORS)], label=s) for i, s in enumerate(subsets)]
    handles += [Line2D([], [], color="grey", marker=m, linestyle="none", label=f) for f, m in markers.items()]
    handles.append(ax.axhline(CHANCE, color="black", linewidth=0.8, linestyle="--", label="chance"))
    ax.set_xscale("log")
    # plain numbers at 1, 2, 5 × 10^k: the default's "2×10⁻¹" labels are hard to read
    ax.xaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("parameters (millions, log scale; models of one size side by side)")
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 105)  # a point at 100% whole, not cut by the frame
    ax.set_yticks(range(0, 101, 20))
    sizes = families["parameters_millions"]
    ax.set_xlim(sizes.min() / 1.6, sizes.max() * 1.6)
    figures.legend_beside(ax, handles=handles)
    # models of the same size at the same accuracy (gpt2 and GPT-Neo 125M, two subsets at one
    # score) would hide each other: the markers are set side by side, the figure laid out first
    figures.lay_out(fig)
    dodged = iter(figures.dodge(ax, [(x, y) for *_, xs, ys in series for x, y in zip(xs, ys)], MARKER_SIZE))
    for color, marker, xs, ys in series:
        ax.plot([next(dodged) for _ in xs], ys, marker=marker, color=color, markersize=MARKER_SIZE)
    figures.save(fig, snakemake.output.png, snakemake.output.svg)

    types = pd.read_csv(snakemake.input.negative_types)
    models = list(dict.fromkeys(types["model"]))
    fig, axes = figures.new(panels=len(models), width=max(4.0, 3.2 * len(models)), height=3.4, sharey=True)
    for ax, model in zip(axes, models):
        part = types[types["model"] == model]
        kinds = list(dict.fromkeys(part["negative_sample_type"]))
        groups = {
            name: [
                float(part.loc[(part["subset_name"] == name) & (part["negative_sample_type"] == k), "accuracy"].sum())
                for k in kinds
            ]
            for name in dict.fromkeys(part["subset_name"])
        }
        figures.grouped_bars(ax, kinds, groups, "accuracy (%)", CHANCE, "chance")
        ax.set_title(model, fontsize=9)
        ax.set_ylim(0, 105)
        ax.get_legend().remove()
    # one legend for all panels, beside the last, where it hides no bar
    axes[-1].legend(*axes[-1].get_legend_handles_labels(), loc="upper left", bbox_to_anchor=(1.02, 1), fontsize=8)
    figures.save(fig, snakemake.output.types_png, snakemake.output.types_svg)
    log.info("figures of %d models over %d subsets", len(models), len(subsets))
