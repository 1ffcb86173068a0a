"""Rule lpaqa_paper_tables: LPAQA's Tables 1-15 from knowprobe's results, each beside the paper's
numbers with the difference (Markdown and LaTeX in the paper's layout, CSV in long form)."""

import pandas as pd

from knowprobe import contracts
from knowprobe.io import rule_logging
from knowprobe.lpaqa import paper
from knowprobe.tables import write_table


def read_all(paths, contract):
    frames = [contracts.read(path, contract) for path in paths]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=contract.columns)


with rule_logging(snakemake.log[0]) as log:
    numbers = paper.load(snakemake.input.paper)
    hub_ids = dict(snakemake.params.hub_ids)
    results = read_all(snakemake.input.selection, contracts.RESULTS)
    majority = read_all(snakemake.input.majority, contracts.RESULTS)
    metrics = read_all(snakemake.input.metrics, contracts.PROMPT_METRICS)
    prompts = read_all(snakemake.input.prompts, contracts.PROMPT_SELECTION)
    written = []

    stand_ins = paper.stand_in_names(snakemake.params.stand_ins)
    stand_in_note = (
        " Rows and columns marked (stand-in) come from stand-in files in the layout of LPAQA's release"
        f" ({', '.join(stand_ins)}), not from LPAQA's prompts."
        if stand_ins
        else ""
    )

    def save(name, long, grid, caption):
        """A table's CSV (long), Markdown and LaTeX (the paper's layout), stand-ins marked."""
        long, grid = paper.mark_stand_ins(long, stand_ins), paper.mark_stand_ins(grid, stand_ins)
        marked = any(
            name in str(value) for name in stand_ins.values() for value in [*grid.columns, *grid.to_numpy().ravel()]
        )
        write_table(snakemake.output, name, long, grid, caption + (stand_in_note if marked else ""))
        written.append(name)

    def missing(name, why):
        """A table the configured prompt sets cannot fill, saying what to add."""
        frame = pd.DataFrame({"note": [why]})
        log.warning("%s: %s", name, why)
        save(name, frame, frame, paper.caption(numbers, name))

    note = " Cells: ours (the paper's, difference)."
    # what a row of Tables 2 and 3 is over: a number over 19 facts and 49,149 candidates is not one
    # over 20 facts and 20
    vocab_sizes = {
        model: len(pd.read_parquet(path)) for model, path in zip(snakemake.params.models, snakemake.input.vocab)
    }
    extent = (
        " Facts: the T-REx test facts the row is over; candidates: the size of the candidate set each"
        " fact is ranked in (the model's candidate vocabulary; Majority ranks none)."
    )
    facts = {
        "T-REx": contracts.read(snakemake.input.trex, contracts.FACTS),
        "T-REx-UHN": contracts.read(snakemake.input.uhn, contracts.FACTS),
        "T-REx-train": contracts.read(snakemake.input.trex_train, contracts.FACTS),
    }
    # T-REx-train also holds the relations Google-RE's map to (P20, P569); the paper's column
    # covers the T-REx relations
    train = facts["T-REx-train"]
    facts["T-REx-train"] = train[train["relation"].isin(set(facts["T-REx"]["relation"]))]
    table = paper.table1(facts, numbers)
    relations = facts["T-REx"]["relation"].nunique()
    here = f"each value is averaged over the {relations} T-REx relations of this run."
    save("table1", table, paper.grid(table, ["statistic"], "dataset"), paper.caption(numbers, "table1", here) + note)
    for name, metric in [("table2", "micro"), ("table3", "macro")]:
        table = paper.table2_3(results, majority, numbers, hub_ids, metric, vocab_sizes)
        # ours only: the rows of the paper's models that are not configured have no number of ours
        majority_rows = table[(table["prompts"] == "Majority") & table["ours"].notna()]
        shares = majority_rows.drop_duplicates("model").set_index("model")["ours"]
        here = (
            (
                f"Majority gives {shares.iloc[0]:.1f}%."
                if shares.round(1).nunique() == 1
                else "Majority gives " + ", ".join(f"{v:.1f}% for {m}" for m, v in shares.items()) + "."
            )
            if len(shares)
            else ""
        )
        save(
            name,
            table,
            paper.extent_grid(table, ["model", "prompts"], "method"),
            paper.caption(numbers, name, here) + note + extent,
        )
    by_set_name = metrics.groupby("prompt_set")
    if {"manual", "mine"} <= set(metrics["prompt_set"]):
        table = paper.table4(by_set_name.get_group("manual"), by_set_name.get_group("mine"), numbers)
        grid = table.assign(gain=table.apply(paper.cell, axis=1)).drop(columns=paper.FIELDS)
        save("table4", table, grid, paper.caption(numbers, "table4") + note)
    else:
        missing("table4", "needs the prompt sets manual and mine (lpaqa.prompt_sets)")
    mine_prompts = prompts[prompts["prompt_set"] == "mine"]
    if len(mine_prompts):
        table = paper.table5(mine_prompts, results[results["prompt_set"] == "mine"], numbers)
        grid = table.assign(gain=table.apply(paper.cell, axis=1)).drop(columns=paper.FIELDS)
        save("table5", table, grid, paper.caption(numbers, "table5") + note)
    else:
        missing("table5", "needs the prompt set mine (lpaqa.prompt_sets)")
    sixes = []
    for prompt_set, seed_set in [("man_para", "manual"), ("mine_para", "mine")]:
        if {prompt_set, seed_set} <= set(metrics["prompt_set"]):
            seeds = contracts.read(snakemake.input[f"seeds_{seed_set}"], contracts.PROMPTS)
            sixes.append(
                paper.table6(
                    by_set_name.get_group(prompt_set), by_set_name.get_group(seed_set), seeds, prompt_set, numbers
                )
            )
    if sixes:
        table = pd.concat(sixes, ignore_index=True)
        caption = (
            paper.caption(numbers, "table6")
            + " Paraphrases one word edit away from their seed; gain in test micro P@1 (%)."
        )
        save("table6", table, table, caption)
    else:
        missing("table6", "needs man_para with manual, or mine_para with mine (lpaqa.prompt_sets)")
    if {"mine", "mine_mid"} <= set(results["prompt_set"]):
        seven = numbers["table7"]
        table = paper.methods_of_sets(results, seven["rows"], paper.configured_model(hub_ids, seven["model"]))
        save(
            "table7", table, paper.grid(table, ["model", "prompts"], "method"), paper.caption(numbers, "table7") + note
        )
    else:
        missing("table7", "needs the prompt sets mine and mine_mid (lpaqa.prompt_sets)")
    sets = [s for s in [*paper.GENERATED_SETS, *paper.RELEASED_SETS] if s in set(results["prompt_set"])]
    for name, dataset in [("table8", "trex"), ("table9", "trex_uhn"), ("table10", "google_re")]:
        if dataset in set(results["dataset"]):
            table = paper.by_set(results, dataset, numbers[name], hub_ids, sets)
            caption = paper.caption(numbers, name) + " Opti for the generated sets." + note
            save(name, table, paper.grid(table, ["model"], "prompts"), caption)
        else:
            missing(name, f"no results on {dataset} (lpaqa.datasets, T-REx-train)")
    if snakemake.input.patterns and len(prompts[prompts["prompt_set"] == "mine"]):
        patterns = pd.read_csv(snakemake.input.patterns)
        ranked = prompts[(prompts["prompt_set"] == "mine") & (prompts["dataset"] == "trex")]
        table = paper.table11(patterns, ranked, numbers)
        caption = (
            paper.caption(numbers, "table11")
            + " Per model: the mined prompts matching each, and their rank on T-REx-train among the top 30 (Figure 4)."
        )
        save("table11", table, table, caption)
    else:
        missing("table11", "needs the prompt set mine (lpaqa.prompt_sets)")
    cross = read_all(snakemake.input.cross_model, contracts.RESULTS)
    if len(cross):
        table = paper.table12(cross, results, numbers, hub_ids)
        save(
            "table12",
            table,
            paper.grid(table, ["test", "weights learned on"], "prompts"),
            paper.caption(numbers, "table12") + note,
        )
    else:
        missing("table12", "needs two masked models (models, lpaqa.models) and a generated prompt set")
    table = paper.table13(numbers)
    caption = (
        paper.caption(numbers, "table13")
        + " ERNIE is not on the Hugging Face hub: the paper's numbers only;"
        + " Table 12 covers every pair of configured models."
    )
    save("table13", table, paper.grid(table, ["test", "weights learned on"], "prompts"), caption)
    if "refined" in set(results["prompt_set"]) and snakemake.params.refined_from in set(results["prompt_set"]):
        table = paper.table14(results, snakemake.params.refined_from, numbers, hub_ids)
        save(
            "table14",
            table,
            paper.grid(table, ["model", "prompts"], "method"),
            paper.caption(numbers, "table14") + note,
        )
    else:
        missing("table14", "needs the prompt set refined and the set it refines (lpaqa.prompt_sets, lpaqa.refine)")
    if "Opti+backward" in set(results["method"]):
        table = paper.table15(results, numbers, hub_ids)
        grid = paper.grid(
            table.assign(column=table["features"] + " " + table["metric"]), ["model", "prompts"], "column"
        )
        save("table15", table, grid, paper.caption(numbers, "table15") + " Opti over each fact's top-B objects." + note)
    else:
        missing("table15", "needs a prompt set of lpaqa.backward.prompt_sets in lpaqa.prompt_sets")
    log.info("tables %s", ", ".join(written))
