"""The report's texts (workflow/report/): every caption and the landing page render without a
docutils system message (issue 55: ``1 / |answer space|`` was a reStructuredText substitution, and
every report showed "Undefined substitution referenced"), and the landing page describes the run
it belongs to: only its studies, with its settings and the kinds of models each probed."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from docutils.core import publish_parts
from jinja2 import Environment

from knowprobe import config as knowprobe_config
from knowprobe import landing

from conftest import ROOT

REPORT = ROOT / "workflow" / "report"


def system_messages(rst: str) -> list[str]:
    """The docutils system messages (warnings and errors) a text gives, as Snakemake renders it."""
    html = publish_parts(rst, writer="html", settings_overrides={"warning_stream": False})["html_body"]
    return re.findall(r'<p class="system-message-title">(.*?)</p>\s*(.*?)</div>', html, re.S)


def landing_page(config: dict) -> str:
    """workflow.rst rendered as Snakemake renders it (Jinja with trim_blocks and lstrip_blocks),
    with what report.smk adds to the config for it."""
    names = {"lpaqa": "LPAQA", "stest": "S-TEST", "comps": "COMPS", "bear": "BEAR"}
    kinds = {name: model["kind"] for name, model in config["models"].items()}
    per_study = {study: dict(kinds) for study in config["studies"]}
    config["_report"] = {
        "headlines": landing.headline_block("BEAR", None, ["m: BEAR score 40.0% (4 relations)"]),
        "shared": "stest" in config["studies"],
        "study_names": ", ".join(names[s] for s in config["studies"]),
        "models": landing.models_line(kinds),
        "kinds": {study: landing.by_kind(models) for study, models in per_study.items()},
        "lpaqa_probed": landing.lpaqa_probed(kinds, config["lpaqa"]["probe"]["scores"]),
        "downloads": "",
    }

    class Snakemake:
        pass

    Snakemake.config = config
    env = Environment(trim_blocks=True, lstrip_blocks=True)
    return env.from_string((REPORT / "workflow.rst").read_text()).render(snakemake=Snakemake)


def demo_config(**changes) -> dict:
    config = yaml.safe_load((ROOT / "resources/demo/config.yaml").read_text())
    config.update(changes)
    return knowprobe_config.validate(config)


def test_every_caption_renders_without_a_system_message():
    found = {}
    for path in sorted(REPORT.rglob("*.rst")):
        name, text = path.relative_to(REPORT).as_posix(), path.read_text()
        if name == "workflow.rst":
            text = landing_page(demo_config())
        elif name == "table.rst":  # a table page's caption is the table's own caption file
            text = text.split("{{", 1)[0]
        assert "{{" not in text and "{%" not in text, name  # no other caption is a template
        if system_messages(text):
            found[name] = system_messages(text)
    assert found == {}


@pytest.mark.parametrize("studies", [["lpaqa", "stest", "comps", "bear"], ["bear"], ["lpaqa"]])
def test_the_landing_page_describes_only_the_studies_of_its_run(studies):
    text = landing_page(demo_config(studies=studies))
    assert system_messages(text) == [], text
    described = {name for name in ["LPAQA", "S-TEST", "COMPS", "BEAR"] if f"**{name}** (" in text}
    assert described == {
        name
        for name, study in zip(["LPAQA", "S-TEST", "COMPS", "BEAR"], ["lpaqa", "stest", "comps", "bear"])
        if study in studies
    }, text
    assert ('"Shared data"' in text) == ("stest" in studies)


def test_lpaqa_is_described_by_the_kinds_of_models_it_probed():
    masked_only = landing.lpaqa_probed({"bert": "masked"}, {"masked": ["mask"], "causal": ["next_token"]})
    assert masked_only == "a masked language model (bert; ranked by the object at the mask)"
    causal = landing.lpaqa_probed({"gpt": "causal", "gpt2": "causal"}, {"masked": ["mask"], "causal": ["statement"]})
    assert causal.startswith("causal language models (gpt, gpt2; ranked by whole statements") and "mask" not in causal
    config = demo_config(studies=["lpaqa"])
    config["models"] = {"gpt": {"kind": "causal", "hub_id": "gpt2"}}
    text = landing_page(config)
    assert "probes a causal language model (gpt; ranked by the object as the next token" in " ".join(text.split())
    assert "masked language model" not in text


def test_a_headline_link_names_its_study_once():
    assert landing.link_label("BEAR", "the BEAR score with 95% intervals") == "The BEAR score with 95% intervals"
    assert landing.link_label("LPAQA", "P@1 with 95% intervals") == "LPAQA P@1 with 95% intervals"
    assert landing.link_label("S-TEST", "Table \u20072") == "S-TEST Table 2"


def test_the_screenshots_show_the_categories_the_report_has(tmp_path):
    """Issue 55: `python -m tests.report_screenshots` shot the demo's category names, and on a
    BEAR-only report wrote four copies of the landing page."""
    import report_screenshots

    report = tmp_path / "report.html"
    categories = {"BEAR": {"Results": ["results/bear/tables/accuracy.html", "results/bear/figures/relations.png"]}}
    report.write_text(f"<script>\n    var categories = {json.dumps(categories)};\n    </script>\n")
    assert report_screenshots.shown(report) == (
        ["BEAR"],
        ["results/bear/tables/accuracy.html", "results/bear/figures/relations.png"],
    )
    assert set(report_screenshots.views(*report_screenshots.shown(report))) == {
        "landing",
        "category-BEAR",
        "result-accuracy.html",
        "result-relations.png",
    }


def test_pretrained_models_lead_and_one_sentence_says_what_the_numbers_mean():
    """Issue 53: the landing page leads with the real model's numbers, and says in one sentence
    what they can and cannot mean (the tiny models trained here show that stages run)."""
    lines = ["tiny: p_r 50.0%", "smol-q4_1@next_token: manual prompts 90.0", "tiny2: p_r 40.0%", "smol-q4_1: x"]
    assert landing.pretrained_first(lines, ["smol-q4_1"]) == [lines[1], lines[3], lines[0], lines[2]]
    assert landing.pretrained_first(lines, []) == lines
    # the studies that show a pretrained model's numbers come first, each group in the config's order
    blocks = [
        (["tiny: 1"], "LPAQA"),
        (["smol-q4_1: 2", "tiny: 3"], "S-TEST"),
        ([], "COMPS"),
        (["smol-q4_1: 4"], "BEAR"),
    ]
    assert landing.studies_in_order(blocks, ["smol-q4_1"]) == ["S-TEST", "BEAR", "LPAQA", "COMPS"]
    assert landing.studies_in_order(blocks, []) == ["LPAQA", "S-TEST", "COMPS", "BEAR"]
    models = {"tiny": {"kind": "masked", "train": {"steps": 10}}, "smol-q4_1": {"kind": "causal", "pypi": {}}}
    sentence = landing.meaning(models)
    assert sentence.startswith("The pretrained models (smol-q4_1) lead")
    assert "(tiny) show that every stage runs" in sentence
    assert landing.meaning({"smol-q4_1": models["smol-q4_1"]}) == ""  # nothing trained here: nothing to say
    assert landing.meaning(models, "A note\n  on two lines.") == "A note on two lines."
    # a model's own scores (lpaqa.probe.scores.models) give it a group of its own
    kinds = {"gpt": "causal", "smol-q4_1": "causal"}
    scores = {"masked": ["mask"], "causal": ["next_token", "statement"], "models": {"smol-q4_1": ["next_token"]}}
    text = landing.lpaqa_probed(kinds, scores)
    assert text.startswith("a causal language model (gpt; ranked by the object as the next token")
    assert "by whole" in text.split(" and a causal")[0]
    assert text.endswith(
        "and a causal language model (smol-q4_1; ranked by the object as the next token after the prompt's text"
        " before it)"
    )
