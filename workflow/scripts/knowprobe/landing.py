"""The HTML report's landing page (workflow/report/workflow.rst): what it says of the run it
belongs to, from the run's own config and tables. Only the Snakefile's report code imports this
module (no rule's code: editing it reruns nothing)."""

from __future__ import annotations

import re

# how LPAQA ranks the candidates under each score (docs/lpaqa.md, "Scores")
SCORE_PHRASES = {
    "mask": "the object at the mask",
    "next_token": "the object as the next token after the prompt's text before it",
    "statement": "whole statements, each candidate of the relation's set filled in",
}


def link_label(study: str, label: str) -> str:
    """A headline link's text: the study and its table's report label ("LPAQA P@1 with 95%
    intervals"), the label alone where it names the study already ("The BEAR score with 95%
    intervals", not "BEAR the BEAR score ...")."""
    label = re.sub(r"\s+", " ", label.replace("\u2007", "")).strip()
    if re.search(rf"\b{re.escape(study)}\b", label):
        return label[:1].upper() + label[1:]
    return f"{study} {label}"


def models_line(models: dict[str, str]) -> str:
    """ "name (kind), ..." of the models the report's studies ran (``models``: name -> kind)."""
    return ", ".join(f"{name} ({kind})" for name, kind in models.items())


def by_kind(models: dict[str, str], how: dict[str, str] | None = None) -> str:
    """ "masked language models (a, b) and causal language models (c)" of ``models`` (name ->
    kind), each kind's ``how`` after its names where given."""
    parts = []
    for kind in ("masked", "causal"):
        names = [name for name, of_kind in models.items() if of_kind == kind]
        if not names:
            continue
        noun = f"a {kind} language model" if len(names) == 1 else f"{kind} language models"
        extra = f"; {how[kind]}" if how and how.get(kind) else ""
        parts.append(f"{noun} ({', '.join(names)}{extra})")
    return " and ".join(parts) or "no model"


def lpaqa_probed(models: dict[str, str], scores: dict) -> str:
    """What LPAQA probed, by kind: "masked language models (a, b; ranked by the object at the
    mask) and causal language models (c; ranked by ...)". ``models``: LPAQA's models, name ->
    kind; ``scores``: lpaqa.probe.scores (kind -> the scores of a model of that kind; ``models``:
    a model's own scores, in place of its kind's, which give it a group of its own)."""
    own = scores.get("models") or {}

    def how(listed: list[str]) -> str:
        return "ranked by " + " and by ".join(SCORE_PHRASES.get(s, s) for s in listed)

    groups = []
    for kind in ("masked", "causal"):
        by_scores: dict[tuple, dict[str, str]] = {}
        for name, of_kind in models.items():
            if of_kind == kind:
                by_scores.setdefault(tuple(own.get(name) or scores.get(kind, [])), {})[name] = kind
        groups += [by_kind(names, {kind: how(list(listed))}) for listed, names in by_scores.items()]
    return " and ".join(groups) or "no model"


def headline_block(study: str, link: str | None, lines: list[str], missing: str | None = None) -> str:
    """One study's bullet of the landing page's headline numbers (reStructuredText): its name, the
    link to its table, a line per model; ``missing`` says why there is no number instead."""
    head = f"- **{study}**" + (f" ({link})" if link else "")
    if not lines:
        lines = [missing or "no headline number in this run's tables"]
    return head + ":\n\n" + "".join(f"  - {line}\n" for line in lines)


def model_of_line(line: str) -> str:
    """The model a headline line is of: its text before the first ": ", less a run's "@SCORE"."""
    return line.split(": ", 1)[0].split("@", 1)[0]


def pretrained_first(lines: list[str], pretrained: list[str]) -> list[str]:
    """A study's headline lines with the pretrained models' lines first (in their order), the
    others after in theirs: a run that probes real models beside the models it trains leads with
    the numbers that say something of a language model."""
    rank = {name: i for i, name in enumerate(pretrained)}
    return sorted(lines, key=lambda line: rank.get(model_of_line(line), len(rank)))


def studies_in_order(blocks: list[tuple[list[str], str]], pretrained: list[str]) -> list[str]:
    """The landing page's study blocks (each its headline lines and its text) with the studies
    that show a pretrained model's numbers first, the others after, each group in the config's
    order: the page leads with what a real model knows, where a run probes one."""
    shows = [any(model_of_line(line) in pretrained for line in lines) for lines, _ in blocks]
    return [text for show, (_, text) in sorted(zip(shows, blocks), key=lambda pair: not pair[0])]


def meaning(models: dict[str, dict], note: str | None = None) -> str:
    """The one sentence after "Headline numbers" that says what the numbers can and cannot mean:
    ``note`` (the config's report.note) where given, else, where the run trains models of its own
    (``models``: the config's models section, each with ``train`` or not), that those show that
    every stage runs, not knowledge; "" where neither."""
    if note:
        return " ".join(note.split())
    trained = [name for name, entry in models.items() if entry.get("train") is not None]
    if not trained:
        return ""
    real = [name for name, entry in models.items() if entry.get("train") is None]
    ours = f"the models trained here on this run's corpus ({', '.join(trained)}) show that every stage runs"
    ours += ", not knowledge"
    if not real:
        return ours[:1].upper() + ours[1:] + "."
    return f"The pretrained models ({', '.join(real)}) lead each study; {ours}."
