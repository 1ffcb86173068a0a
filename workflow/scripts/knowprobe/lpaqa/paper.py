"""LPAQA's tables (TACL 2020), built from knowprobe's results and laid out as the paper lays them
out, each number beside the paper's own (``resources/papers/lpaqa.yaml``) with the difference.

Every builder returns a long table with ``ours, paper, difference`` (percent, one decimal; the
paper's number only where the paper reports that model and setting: a configured model matches
the paper's by its hub id), which the rule writes as CSV, and from which ``grid`` lays out the
Markdown and LaTeX versions.
"""

from __future__ import annotations

import pandas as pd

from ..tables import FIELDS, beside, cell, grid  # noqa: F401 (this module's API)
from ..tables import load_paper as load  # noqa: F401
from .analysis import edit_distance, words
from .trex_train import statistics

SET_NAMES = {
    "manual": "Man",
    "mine": "Mine",
    "mine_mid": "Mine (middle-word)",
    "mine_man": "Mine+Man",
    "mine_para": "Mine+Para",
    "man_para": "Man+Para",
    "refined": "Refined",
    "lpaqa_mine": "LPAQA's Mine",
    "lpaqa_paraphrase": "LPAQA's Mine+Para",
    "lpaqa_manual_paraphrase": "LPAQA's Man+Para",
    "pararel": "ParaRel",
}
GENERATED_SETS = ["mine", "mine_man", "mine_para", "man_para"]  # the rows of Tables 2 and 3
# LPAQA's released prompt sets, and the paper's set each stands for (the paper's numbers were
# obtained with these very prompts)
RELEASED_SETS = {"lpaqa_mine": "mine", "lpaqa_paraphrase": "mine_para", "lpaqa_manual_paraphrase": "man_para"}
STAND_IN = " (stand-in)"
MAIN_METHODS = ["Top1", "Top3", "Top5", "Opti", "Oracle"]


def stand_in_names(prompt_sets) -> dict[str, str]:
    """The shown name of each prompt set read from stand-in files -> the name marked as such."""
    return {SET_NAMES[name]: SET_NAMES[name] + STAND_IN for name in prompt_sets if name in SET_NAMES}


def mark_stand_ins(frame: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    """``frame`` with the stand-ins' names marked, in its cells and its column names."""
    if not names:
        return frame
    return frame.rename(columns=names).replace(names)


def caption(numbers: dict, name: str, here: str = "") -> str:
    """A table's caption: its number, the paper's caption quoted (its numbers are the paper's),
    then what the table holds in this run, with our numbers."""
    number, _, text = numbers[name]["caption"].partition(": ")
    return f'{number}. The paper\'s caption: "{text}"' + (f" In this run: {here}" if here else "")


def averaged(results: pd.DataFrame, dataset: str, metric: str = "micro", split: str = "test") -> pd.DataFrame:
    """Per (model, prompt_set, method): the mean over relations of ``metric`` in percent."""
    rows = results[(results["dataset"] == dataset) & (results["split"] == split)]
    return (
        rows.groupby(["model", "prompt_set", "method"], sort=False)
        .agg(value=(metric, "mean"), relations=("relation", "nunique"), facts=("n_facts", "sum"))
        .reset_index()
        .assign(value=lambda f: 100 * f["value"])
    )


def value(frame: pd.DataFrame, model: str, prompt_set: str, method: str) -> float:
    rows = frame[(frame["model"] == model) & (frame["prompt_set"] == prompt_set) & (frame["method"] == method)]
    return rows["value"].iloc[0] if len(rows) else float("nan")


def reported(table: dict, hub_ids: dict, model: str) -> dict:
    return table.get("models", {}).get(hub_ids.get(model) or "", {})


def table1(columns: dict[str, pd.DataFrame], paper: dict) -> pd.DataFrame:
    """Statistics of T-REx, T-REx-UHN and T-REx-train, averaged over relations."""
    rows = []
    for name, facts in columns.items():
        averages = statistics(facts).drop(columns="relation").mean()
        for statistic, number in averages.items():
            reported_value = paper["table1"]["columns"].get(name, {}).get(statistic)
            ours = beside(number, reported_value)
            rows.append({"statistic": statistic, "dataset": name, **ours, "relations": facts["relation"].nunique()})
    return pd.DataFrame(rows)


def table2_3(
    results: pd.DataFrame,
    majority: pd.DataFrame,
    paper: dict,
    hub_ids: dict,
    metric: str,
    vocab_sizes: dict[str, int] | None = None,
) -> pd.DataFrame:
    """Tables 2 (micro) and 3 (macro) on T-REx: Majority, Man, and each generated set's Top1,
    Top3, Top5, Opti and Oracle, per model; each row of ours with what it is over: ``facts`` (the
    T-REx test facts, summed over relations) and ``candidates`` (the candidate set each fact is
    ranked in: the model's candidate vocabulary, ``vocab_sizes``; Majority ranks none)."""
    table = paper["table2" if metric == "micro" else "table3"]
    ours, baseline = averaged(results, "trex", metric), averaged(majority, "trex", metric)
    vocab_sizes = vocab_sizes or {}
    rows = []

    def over(frame: pd.DataFrame, model: str, prompt_set: str, method: str) -> dict:
        # a prompt set's methods all answer the same facts: a method without a number of ours
        # (one the config did not run) still sits on its set's row
        picked = frame[(frame["model"] == model) & (frame["prompt_set"] == prompt_set)]
        facts = int(picked["facts"].iloc[0]) if len(picked) else float("nan")
        candidates = float("nan") if method == "Majority" else vocab_sizes.get(model, float("nan"))
        return {"facts": facts, "candidates": candidates}

    for model in dict.fromkeys(ours["model"]):
        paper_numbers = reported(table, hub_ids, model)
        majority_value = value(baseline, model, "-", "Majority")
        rows.append(
            {
                "model": model,
                "prompts": "Majority",
                "method": "Top1",
                **beside(majority_value, table["majority"] if paper_numbers else None),
                **over(baseline, model, "-", "Majority"),
            }
        )
        rows.append(
            {
                "model": model,
                "prompts": "Man",
                "method": "Top1",
                **beside(value(ours, model, "manual", "Top1"), paper_numbers.get("Man")),
                **over(ours, model, "manual", "Top1"),
            }
        )
        for prompt_set in [s for s in [*GENERATED_SETS, *RELEASED_SETS] if s in set(ours["prompt_set"])]:
            for method in MAIN_METHODS:
                number = paper_numbers.get(RELEASED_SETS.get(prompt_set, prompt_set), {}).get(method)
                rows.append(
                    {
                        "model": model,
                        "prompts": SET_NAMES[prompt_set],
                        "method": method,
                        **beside(value(ours, model, prompt_set, method), number),
                        **over(ours, model, prompt_set, method),
                    }
                )
    # the paper's models that are not configured: their numbers, none of ours, so that the table
    # always shows what the paper reports
    for name, numbers in table.get("models", {}).items():
        if name not in hub_ids.values():
            label = f"{name} (paper only)"
            rows.append({"model": label, "prompts": "Majority", "method": "Top1", **beside(None, table["majority"])})
            rows.append({"model": label, "prompts": "Man", "method": "Top1", **beside(None, numbers.get("Man"))})
            rows += [
                {"model": label, "prompts": SET_NAMES[s], "method": m, **beside(None, numbers.get(s, {}).get(m))}
                for s in GENERATED_SETS
                for m in MAIN_METHODS
            ]
    frame = pd.DataFrame(rows)
    return frame.astype({"facts": "Int64", "candidates": "Int64"}) if len(frame) else frame


def extent_grid(table: pd.DataFrame, index: list[str], column: str) -> pd.DataFrame:
    """``grid`` of a table whose rows carry ``facts`` and ``candidates``: those two beside the
    ``index`` columns (the same for a row's methods), '–' where a row has none."""
    labelled = table.assign(
        **{name: table[name].map(lambda n: "–" if pd.isna(n) else f"{int(n):,}") for name in ("facts", "candidates")}
    )
    return grid(labelled, [*index, "facts", "candidates"], column)


def per_prompt(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per-prompt test micro P@1 (percent) on T-REx: ``model, relation, template, value``."""
    rows = metrics[(metrics["dataset"] == "trex") & (metrics["split"] == "test")]
    return rows.assign(value=100 * rows["micro"])[["model", "relation", "template", "value"]]


def table4(manual: pd.DataFrame, mined: pd.DataFrame, paper: dict) -> pd.DataFrame:
    """Per relation, the mined prompt with the largest gain over the manual one (test micro)."""
    manual, mined = per_prompt(manual), per_prompt(mined)
    best = mined.sort_values(["model", "relation", "value", "template"], ascending=[True, True, False, True])
    best = best.drop_duplicates(["model", "relation"]).merge(
        manual, on=["model", "relation"], suffixes=("_mined", "_manual")
    )
    best = best.assign(gain=best["value_mined"] - best["value_manual"]).sort_values(
        ["model", "gain"], ascending=[True, False]
    )
    paper_rows = {row["relation"]: row for row in paper["table4"]["rows"]}
    rows = []
    for row in best.itertuples(index=False):
        reported_row = paper_rows.get(row.relation, {})
        rows.append(
            {
                "model": row.model,
                "relation": row.relation,
                "manual prompt": row.template_manual,
                "mined prompt": row.template_mined,
                "manual": round(row.value_manual, 1),
                "mined": round(row.value_mined, 1),
                "paper's mined prompt": reported_row.get("mined", ""),
                **beside(row.gain, reported_row.get("gain")),
            }
        )
    return pd.DataFrame(rows)


def table5(prompts: pd.DataFrame, results: pd.DataFrame, paper: dict) -> pd.DataFrame:
    """Per relation, Opti's weights of its top-3 prompts and Opti's gain over Top-1 (test micro)."""
    ours = results[(results["dataset"] == "trex") & (results["split"] == "test")]
    scores = ours.pivot_table(index=["model", "relation"], columns="method", values="micro").reset_index()
    paper_rows = {row["relation"]: row for row in paper["table5"]["rows"]}
    rows = []
    trex = prompts[prompts["dataset"] == "trex"]
    for (model, relation), group in trex.groupby(["model", "relation"], sort=True):
        top = group.sort_values("weight", ascending=False).head(3)
        score = scores[(scores["model"] == model) & (scores["relation"] == relation)]
        gain = 100 * (score["Opti"].iloc[0] - score["Top1"].iloc[0]) if len(score) else float("nan")
        reported_row = paper_rows.get(relation, {})
        rows.append(
            {
                "model": model,
                "relation": relation,
                "prompts and weights": "; ".join(f"{t} {w:.3f}" for t, w in zip(top["template"], top["weight"])),
                "paper's": "; ".join(
                    f"{t} {w:.3f}" for t, w in zip(reported_row.get("prompts", []), reported_row.get("weights", []))
                ),
                **beside(gain, reported_row.get("gain")),
            }
        )
    return pd.DataFrame(rows).sort_values(["model", "ours"], ascending=[True, False]).reset_index(drop=True)


def table6(
    paraphrase_metrics: pd.DataFrame, seed_metrics: pd.DataFrame, seeds: pd.DataFrame, prompt_set: str, paper: dict
) -> pd.DataFrame:
    """Paraphrases one word edit away from their seed, by their test micro gain over the seed."""
    para, seed_scores = per_prompt(paraphrase_metrics), per_prompt(seed_metrics)
    seed_of = dict(zip(seeds["relation"], seeds["template"]))
    rows = []
    for row in para.itertuples(index=False):
        seed = seed_of.get(row.relation)
        if seed is None or row.template == seed or edit_distance(words(seed), words(row.template)) != 1:
            continue
        base = seed_scores[
            (seed_scores["model"] == row.model)
            & (seed_scores["template"] == seed)
            & (seed_scores["relation"] == row.relation)
        ]
        if len(base):
            rows.append(
                {
                    "model": row.model,
                    "prompt_set": prompt_set,
                    "relation": row.relation,
                    "seed": seed,
                    "paraphrase": row.template,
                    "gain": round(row.value - base["value"].iloc[0], 1),
                }
            )
    frame = pd.DataFrame(rows, columns=["model", "prompt_set", "relation", "seed", "paraphrase", "gain"])
    return frame.sort_values(["model", "gain"], ascending=[True, False]).reset_index(drop=True)


def by_set(
    results: pd.DataFrame, dataset: str, table: dict, hub_ids: dict, sets: list[str], method: str = "Opti"
) -> pd.DataFrame:
    """Tables 8-10: per model, Man and ``method`` of each set on a dataset (test micro)."""
    ours = averaged(results, dataset)
    rows = []
    for model in dict.fromkeys(ours["model"]):
        numbers = reported(table, hub_ids, model)
        rows.append(
            {"model": model, "prompts": "Man", **beside(value(ours, model, "manual", "Top1"), numbers.get("Man"))}
        )
        for prompt_set in [s for s in sets if s in set(ours["prompt_set"])]:
            number = numbers.get(RELEASED_SETS.get(prompt_set, prompt_set))
            rows.append(
                {
                    "model": model,
                    "prompts": SET_NAMES[prompt_set],
                    **beside(value(ours, model, prompt_set, method), number),
                }
            )
    # the paper's models no hub holds (ERNIE, KnowBert): their numbers, none of ours
    for name, numbers in table.get("models", {}).items():
        if name not in hub_ids.values():
            rows.append({"model": f"{name} (paper only)", "prompts": "Man", **beside(None, numbers.get("Man"))})
            rows += [
                {"model": f"{name} (paper only)", "prompts": SET_NAMES[s], **beside(None, numbers.get(s))}
                for s in GENERATED_SETS
            ]
    return pd.DataFrame(rows)


def configured_model(hub_ids: dict, hub_id: str) -> str | None:
    """The configured model that is the paper's ``hub_id`` (a table of one model: 7, 14, 15), if any."""
    return next((model for model, hub in hub_ids.items() if hub == hub_id), None)


def methods_of_sets(
    results: pd.DataFrame, rows_of: dict[str, dict], model_of_paper: str | None, labels: dict[str, str] | None = None
) -> pd.DataFrame:
    """Tables 7 and 14: rows of prompt sets (named by ``labels``, else by ``SET_NAMES``) × Top1,
    Top3, Top5, Opti, Oracle on T-REx; ``rows_of[set]`` holds the paper's numbers of a row."""
    labels = labels or {}
    ours = averaged(results, "trex")
    rows = []
    for model in dict.fromkeys(ours["model"]):
        for prompt_set, paper_row in rows_of.items():
            if prompt_set not in set(ours["prompt_set"]):
                continue
            for method in MAIN_METHODS:
                number = paper_row.get(method) if model == model_of_paper else None
                rows.append(
                    {
                        "model": model,
                        "prompts": labels.get(prompt_set, SET_NAMES.get(prompt_set, prompt_set)),
                        "method": method,
                        **beside(value(ours, model, prompt_set, method), number),
                    }
                )
    return pd.DataFrame(rows)


def table11(patterns: pd.DataFrame, ranked: pd.DataFrame, paper: dict) -> pd.DataFrame:
    """ReVerb's three part-of-speech patterns, and per model how many mined prompts match each
    (and none), with their median and mean train rank within the top 30 (Figure 4)."""
    from .analysis import ranks_by_pattern
    from .pos import OTHER, PATTERNS

    rows = []
    for model, group in ranked.groupby("model", sort=False):
        points = ranks_by_pattern(patterns, group)
        for name in [*PATTERNS, OTHER]:
            mine = patterns[patterns["pattern"] == name]
            top = points[points["pattern"] == name]["train_rank"]
            rows.append(
                {
                    "model": model,
                    "pattern": PATTERNS.get(name, "none of the three"),
                    "prompts": len(mine),
                    "in top 30": len(top),
                    "median rank": float(top.median()) if len(top) else float("nan"),
                    "mean rank": round(float(top.mean()), 1) if len(top) else float("nan"),
                }
            )
    return pd.DataFrame(rows)


def table12(cross: pd.DataFrame, own: pd.DataFrame, paper: dict, hub_ids: dict) -> pd.DataFrame:
    """Opti with the weights learned on one model applied to another (T-REx test micro), for every
    ordered pair of configured models, beside Table 12 where both are BERT-base/large."""
    results = pd.concat([own[own["method"] == "Opti"], cross[cross["method"] == "Opti"]], ignore_index=True)
    results = results[(results["dataset"] == "trex") & (results["split"] == "test")]
    means = results.groupby(["model", "fitted_on", "prompt_set"], sort=False)["micro"].mean().mul(100)
    rows = []
    for (model, fitted_on, prompt_set), number in means.items():
        if prompt_set not in GENERATED_SETS:
            continue
        key = f"{hub_ids.get(model)}/{hub_ids.get(fitted_on)}"
        reported_value = paper["table12"]["pairs"].get(key, {}).get(prompt_set)
        rows.append(
            {
                "test": model,
                "weights learned on": fitted_on,
                "prompts": SET_NAMES[prompt_set],
                **beside(number, reported_value),
            }
        )
    return pd.DataFrame(rows)


def table13(paper: dict) -> pd.DataFrame:
    """Table 13 (BERT-base and ERNIE) as the paper reports it: ERNIE is not on the Hugging Face
    hub, so knowprobe has no numbers of its own here; Table 12 covers every configured pair."""
    rows = [
        {
            "test": pair.split("/")[0],
            "weights learned on": pair.split("/")[1],
            "prompts": SET_NAMES[prompt_set],
            **beside(None, number),
        }
        for pair, numbers in paper["table13"]["pairs"].items()
        for prompt_set, number in numbers.items()
    ]
    return pd.DataFrame(rows)


def table14(results: pd.DataFrame, before: str, paper: dict, hub_ids: dict) -> pd.DataFrame:
    """LM-aware refinement: the refined set against the set it was refined from (T-REx test micro)."""
    fourteen = paper["table14"]
    rows_of = {before: fourteen["rows"]["before"], "refined": fourteen["rows"]["after"]}
    labels = {before: f"before ({SET_NAMES.get(before, before)})", "refined": "after (Refined)"}
    return methods_of_sets(results, rows_of, configured_model(hub_ids, fourteen["model"]), labels)


def table15(results: pd.DataFrame, paper: dict, hub_ids: dict) -> pd.DataFrame:
    """Opti over each fact's top-B objects with forward features only, and with backward ones added
    (T-REx test, micro and macro)."""
    fifteen = paper["table15"]
    model_of_paper = configured_model(hub_ids, fifteen["model"])
    rows = []
    for metric in ("micro", "macro"):
        ours = averaged(results, "trex", metric)
        for model in dict.fromkeys(ours["model"]):
            for prompt_set in dict.fromkeys(ours.loc[ours["method"] == "Opti+backward", "prompt_set"]):
                for label, method in [("forward", "Opti-forward"), ("+backward", "Opti+backward")]:
                    reported_row = fifteen["rows"].get(prompt_set, {}) if model == model_of_paper else {}
                    number = reported_row.get("forward" if label == "forward" else "backward", {}).get(metric)
                    rows.append(
                        {
                            "model": model,
                            "prompts": SET_NAMES.get(prompt_set, prompt_set),
                            "features": label,
                            "metric": metric,
                            **beside(value(ours, model, prompt_set, method), number),
                        }
                    )
    return pd.DataFrame(rows)


def headlines(table2: pd.DataFrame) -> list[str]:
    """The report's landing-page line per model, from Table 2 (micro P@1 on T-REx): the manual
    prompts' Top-1 and the best Top-1 of the other prompt sets."""
    ours = table2[(table2["method"] == "Top1") & table2["ours"].notna()]
    lines = []
    for model, rows in ours.groupby("model", sort=False):
        manual = rows.loc[rows["prompts"] == "Man", "ours"]
        others = rows[~rows["prompts"].isin(["Majority", "Man"])]
        if manual.empty or others.empty:
            continue
        best = others.loc[others["ours"].idxmax()]
        lines.append(f"{model}: manual prompts {manual.iloc[0]:.1f}, best Top-1 {best['ours']:.1f} ({best['prompts']})")
    return lines
