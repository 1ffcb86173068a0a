"""Rule lpaqa_paper_figures: LPAQA's Figures 2-5 (PNG and SVG), with the numbers drawn as CSV.

Figure 2: micro P@1 on T-REx against K of the Top-K ensemble, per prompt set. Figure 3: prediction
divergence of two prompts of a relation against their normalised edit distance. Figure 4: train
rank within the top 30 of mined prompts, by ReVerb part-of-speech pattern. Figure 5: linear against
log-linear Top-K of the mined prompts.
"""

import pandas as pd

from knowprobe import contracts, figures
from knowprobe.io import rule_logging, write_csv
from knowprobe.lpaqa import analysis, metrics, paper
from knowprobe.lpaqa.pos import OTHER, PATTERNS

with rule_logging(snakemake.log[0]) as log:
    out = snakemake.output
    results = pd.concat([contracts.read(p, contracts.RESULTS) for p in snakemake.input.selection], ignore_index=True)
    trex = results[(results["dataset"] == "trex") & (results["split"] == "test")]
    models = list(dict.fromkeys(trex["model"]))
    max_k = snakemake.params.max_k
    # the released sets read from stand-in files (the demo's) are marked as such
    set_names = {
        s: paper.SET_NAMES[s] + (paper.STAND_IN if s in snakemake.params.stand_ins else "") for s in paper.SET_NAMES
    }

    def top_k_curve(methods):
        """Mean over relations of micro P@1 (%) for each (model, prompt set, K) of ``methods(K)``."""
        rows = []
        for k in range(1, max_k + 1):
            for method in methods(k):
                part = trex[trex["method"] == method]
                means = part.groupby(["model", "prompt_set"], sort=False)["micro"].mean().mul(100)
                rows += [
                    {"model": m, "prompt_set": s, "K": k, "method": method, "micro": v} for (m, s), v in means.items()
                ]
        return pd.DataFrame(rows)

    # Figure 2
    curve = top_k_curve(lambda k: [f"Top{k}"])
    curve = curve[curve["prompt_set"] != "manual"]
    fig, axes = figures.new(panels=len(models), width=4.2 * len(models) + 1.6, height=3.2)
    for ax, model in zip(axes, models):
        sets = curve[curve["model"] == model].groupby("prompt_set", sort=False)
        figures.lines(ax, {set_names.get(name, name): (rows["K"], rows["micro"]) for name, rows in sets})
        ax.set(
            title=model,
            xlabel="K (prompts in the Top-K ensemble)",
            ylabel="micro P@1 on T-REx (%)",
            xticks=range(1, max_k + 1),
        )
    figures.legend_beside(axes[-1])  # the prompt sets are the same in every panel
    figures.save(fig, out.figure2_png, out.figure2_svg)
    write_csv(curve, out.figure2_csv)

    # Figure 3: the first model's per-prompt correctness on T-REx test
    pairs = []
    for prompt_set, path in zip(snakemake.params.divergence_sets, snakemake.input.divergence):
        table = contracts.read(
            path,
            contracts.PROBE,
            columns=[
                "relation",
                "fact_id",
                "prompt_id",
                "template",
                "source",
                "rank",
                "sub_label",
                "obj_label",
                "obj_token_id",
                "gold_rank",
            ],
        )
        for relation in sorted(set(table["relation"])):
            grid, prompts, _ = metrics.relation_grid(table, relation)
            right = table["gold_rank"].to_numpy()[grid] == 0
            pairs.append(
                analysis.divergence_pairs(relation, prompts["template"].tolist(), right).assign(prompt_set=prompt_set)
            )
    pairs = (
        pd.concat(pairs, ignore_index=True)
        if pairs
        else pd.DataFrame(columns=["prompt_set", "normalized", "divergence", "edit_distance"])
    )
    pairs["bin"] = analysis.distance_bin(pairs["normalized"].to_numpy(float))
    sets = list(dict.fromkeys(pairs["prompt_set"])) or ["none"]
    fig, axes = figures.new(panels=len(sets), width=3.6 * len(sets), height=3.2)
    summary = []
    for ax, prompt_set in zip(axes, sets):
        part = pairs[pairs["prompt_set"] == prompt_set]
        groups = [part.loc[part["bin"] == label, "divergence"].to_numpy() for label in analysis.BIN_LABELS]
        figures.boxes(ax, groups, analysis.BIN_LABELS)
        r = analysis.pearson(part["normalized"], part["divergence"])
        mean_distance = float(part["edit_distance"].mean()) if len(part) else float("nan")
        summary.append(
            {"prompt_set": prompt_set, "pairs": len(part), "pearson_r": r, "mean_edit_distance": mean_distance}
        )
        ax.set(
            title=f"{set_names.get(prompt_set, prompt_set)}: Pearson r = {r:.2f}",
            xlabel="normalised edit distance",
            ylabel="prediction divergence",
        )
        ax.tick_params(axis="x", labelsize=7)
    figures.save(fig, out.figure3_png, out.figure3_svg)
    write_csv(pd.DataFrame(summary), out.figure3_csv)
    log.info("Figure 3 (%s): %s", models[0] if models else "-", summary)

    # Figure 4: train ranks of the mined prompts by part-of-speech pattern
    patterns = pd.read_csv(snakemake.input.patterns)
    ranked = pd.concat(
        [contracts.read(p, contracts.PROMPT_SELECTION) for p in snakemake.input.mine_prompts], ignore_index=True
    )
    ranked = ranked[ranked["dataset"] == "trex"]
    names = [*PATTERNS, OTHER]
    fig, axes = figures.new(panels=len(models), width=4.0 * len(models), height=3.2)
    points = []
    for ax, model in zip(axes, models):
        part = analysis.ranks_by_pattern(patterns, ranked[ranked["model"] == model]).assign(model=model)
        # ranks as the paper counts them, from 1 (the best prompt); train_rank, the contract's, counts from 0
        part["rank"] = part["train_rank"] + 1
        points.append(part)
        figures.boxes(ax, [part.loc[part["pattern"] == n, "rank"].to_numpy() for n in names], names)
        ax.set(title=model, xlabel="part-of-speech pattern (x/y ... y/x)", ylabel="rank on T-REx-train (1 = the best)")
    figures.save(fig, out.figure4_png, out.figure4_svg)
    write_csv(pd.concat(points, ignore_index=True) if points else pd.DataFrame(), out.figure4_csv)

    # Figure 5
    curve = top_k_curve(lambda k: [f"Top{k}", f"Top{k}-linear"])
    curve = curve[curve["prompt_set"] == snakemake.params.interpolation_set]
    fig, axes = figures.new(panels=len(models), width=4.2 * len(models), height=3.2)
    for ax, model in zip(axes, models):
        rows = curve[curve["model"] == model]
        linear = rows["method"].str.endswith("-linear")
        figures.lines(
            ax,
            {
                "log-linear": (rows.loc[~linear, "K"], rows.loc[~linear, "micro"]),
                "linear": (rows.loc[linear, "K"], rows.loc[linear, "micro"]),
            },
        )
        ax.set(
            title=f"{model}: {set_names.get(snakemake.params.interpolation_set)}",
            xlabel="K",
            ylabel="micro P@1 on T-REx (%)",
            xticks=range(1, max_k + 1),
        )
        ax.legend(fontsize=8)
    figures.save(fig, out.figure5_png, out.figure5_svg)
    write_csv(curve, out.figure5_csv)
    log.info("Figures 2-5 for %d models; %d prompt pairs in Figure 3", len(models), len(pairs))
    if not len(pairs):
        log.warning("Figure 3 has no prompt pairs: no generated prompt set with two prompts of a relation")
