"""The report's table pages and landing-page headlines, on tables written here."""

import pandas as pd

from knowprobe.comps import tables as comps_tables
from knowprobe.lpaqa import paper as lpaqa_paper
from knowprobe.stest import paper as stest_paper
from knowprobe.tables import html_page, read_markdown, to_markdown


def test_a_markdown_table_reads_back_with_its_caption_and_renders_as_a_page():
    frame = pd.DataFrame(
        {"model": ["bert <base>", "gpt2"], "Top1": [34.6, float("nan")], "cell": ["1.0 (2.0, -1.0)", "x"]}
    )
    text = "Table 2: accuracy (%).\n\n" + to_markdown(frame)
    caption, read = read_markdown(text)
    assert caption == "Table 2: accuracy (%)."
    assert read.to_dict("list") == {
        "model": ["bert <base>", "gpt2"],
        "Top1": ["34.6", "–"],
        "cell": ["1.0 (2.0, -1.0)", "x"],
    }
    page = html_page("Table 2", caption, read, note="results/x.md")
    assert page.startswith("<!doctype html>") and "<th>Top1</th>" in page
    assert "bert &lt;base&gt;" in page  # escaped
    # the paper's number and the difference on a line of their own (issue 28: wide tables)
    assert '<td class="number">34.6</td>' in page
    assert '<td class="number">1.0<br><span class="paper">(2.0, -1.0)</span></td>' in page
    assert "<td>x</td>" in page and "results/x.md" in page


def test_headlines_give_one_line_per_model():
    lpaqa = pd.DataFrame(
        {
            "model": ["m"] * 4 + ["n"],
            "prompts": ["Majority", "Man", "Mine", "Man+Para", "Man"],
            "method": ["Top1", "Top1", "Top1", "Top1", "Top1"],
            "ours": [17.4, 34.6, 59.7, 68.1, 8.9],
        }
    )
    assert lpaqa_paper.headlines(lpaqa) == ["m: manual prompts 34.6, best Top-1 68.1 (Man+Para)"]  # n: no other set
    stest = pd.DataFrame(
        {"model": ["m", "GPT-2 (paper only)"], "relation": ["Average", "Average"], "ours": [68.7, None]}
    )
    assert stest_paper.headlines(stest) == ["m: p_r 68.7% (vanilla prompts, average)"]
    comps = pd.DataFrame({"model": ["m", "m"], "subset": ["base", "wugs"], "accuracy": [94.79, 54.8]})
    assert comps_tables.headlines(comps) == ["m: COMPS-BASE 94.8, COMPS-WUGS 54.8"]
