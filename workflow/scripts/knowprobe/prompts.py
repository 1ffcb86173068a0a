"""Prompt templates: validation, filling, and prompt-set tables.

A template holds exactly one ``[X]`` (the subject) and one ``[Y]`` (the object slot that
the probe masks). A prompt set is a table with columns
``relation, template, source, rank, score`` (the ``prompts`` contract).
"""

from __future__ import annotations

import pandas as pd

from .contracts import PROMPTS
from .io import KnowprobeError

SUBJECT = "[X]"
OBJECT = "[Y]"


# what may follow [Y] for it to count as the prompt's end (a next-token score's input drops the rest, so
# only such a prompt is scored whole by a causal LM)
END_PUNCTUATION = ("", ".", "?", "!")


def object_at_end(template: str) -> bool:
    """Whether ``[Y]`` ends the prompt: nothing after it but whitespace and one of ``.?!``."""
    return template.split(OBJECT, 1)[1].strip() in END_PUNCTUATION


def template_problem(template: str) -> str | None:
    """Why ``template`` is not usable, or None when it is."""
    if not isinstance(template, str) or not template.strip():
        return "empty template"
    for slot in (SUBJECT, OBJECT):
        count = template.count(slot)
        if count != 1:
            return f"template {template!r} has {count} {slot} (needs exactly one)"
    return None


def check_template(template: str, where: str) -> str:
    problem = template_problem(template)
    if problem:
        raise KnowprobeError(f"{where}: {problem}")
    return template


def fill_template(template: str, subject: str, mask_token: str) -> str:
    """Put the subject label in ``[X]`` and the model's mask token in ``[Y]``.

    The template is used as LAMA writes it (``"[X] was born in [Y] ."``): tokenizers
    split off the final period either way, and LAMA's reported numbers use this form.
    """
    return template.replace(SUBJECT, subject.strip()).replace(OBJECT, mask_token)


def prompt_table(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=PROMPTS.columns)
    frame["rank"] = frame["rank"].astype("int32")
    frame["score"] = frame["score"].astype("float64")
    return frame
