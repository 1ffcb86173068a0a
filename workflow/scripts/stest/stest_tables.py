"""Rule stest_tables: p_r of every model, measure, method and mode, and the paper's Tables 1, 2, 3,
5 and 6 beside the paper's numbers (Markdown and LaTeX in the paper's layout, CSV in long form),
with the effect of the release's way of counting."""

import pandas as pd

from knowprobe import contracts
from knowprobe.io import rule_logging, write_csv
from knowprobe.scoring.start_token import start_token_of
from knowprobe.stest import metrics, paper
from knowprobe.tables import grid, load_paper, write_table

with rule_logging(snakemake.log[0]) as log:
    numbers = load_paper(snakemake.input.paper)
    scores = pd.concat([contracts.read(p, contracts.STEST_SCORES) for p in snakemake.input.scores], ignore_index=True)
    pr = metrics.p_r(scores)
    write_csv(pr, snakemake.output.pr)
    rows = paper.model_rows(dict(snakemake.params.models), numbers)
    note = " Cells: ours (the paper's, difference)."
    # the token each causal model read before every query (docs/scoring.md, "The start token")
    causal = [name for name, info in dict(snakemake.params.models).items() if info["kind"] == "causal"]
    starts = {
        name: start_token_of(path, dict(snakemake.params.models)[name]["start_token"])
        for name, path in zip(causal, snakemake.input.models)
    }
    if starts:
        note += " Causal models' start token: " + ", ".join(f"{name}: {label}" for name, label in starts.items()) + "."

    def save(name, long, layout, caption):
        write_table(snakemake.output, name, long, layout, caption)

    sources = {"knowprobe (Wikidata)": snakemake.input.built, "released": snakemake.input.released}
    triples = {name: contracts.read(path, contracts.STEST_TRIPLES) for name, path in sources.items() if path}
    table1 = paper.table1(triples, numbers)
    save("table1", table1, table1, numbers["table1"]["caption"] + " Beside it: the paper's pairs.")
    for name, builder, index in (
        ("table2", paper.table2, ["model"]),
        ("table3", paper.table3, ["model", "measure"]),
        ("table5", paper.table5, ["model", "method"]),
    ):
        long = builder(pr, rows, numbers)
        save(name, long, grid(long, index, "relation", paper.DECIMALS), numbers[name]["caption"] + note)
    long = paper.table6(pr, rows, numbers)
    save("table6", long, grid(long, ["row"], "model", paper.DECIMALS), numbers["table6"]["caption"] + note)
    if snakemake.params.compat:
        effect = paper.compat_effect(pr, metrics.p_r(scores, compat=True))
        caption = (
            "p_r as knowprobe counts it (both objects candidates) and as the release's eval.py does (p_r_compat: "
            "a coarse object that is not a candidate counts as a success), with the difference."
        )
        moved = effect[effect["difference"].abs() > 0]
        log.info("compat counting moves %d of %d p_r values", len(moved), len(effect))
    else:
        effect = pd.DataFrame({"note": ["stest.compat is off"]})
        caption = "The release's counting was not computed (stest.compat: false)."
    save("compat", effect, effect, caption)
    left_out = pr[(pr["relation"] != "Average") & (pr["left_out"] > 0)]
    if len(left_out):
        log.warning(
            "triples left out (an object not a candidate): %s",
            left_out.groupby("model")["left_out"].max().to_dict(),
        )
