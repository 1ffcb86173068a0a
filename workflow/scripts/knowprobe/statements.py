"""Statements: a template filled with a subject and a candidate answer, for statement scoring
(``scoring``'s ``statement_logprob``; docs/scoring.md, "Statement scores").

A statement is the template with ``[X]`` replaced by the subject's label and ``[Y]`` by the
answer's, its first character upper-cased by default: exactly lm-pub-quiz's ``Templater``
(0.3.3), which BEAR's numbers come from. The answer's character span is kept, so that the
answer-only (``conditional``) scores can find the answer's tokens.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .io import KnowprobeError

SUBJECT = "[X]"
ANSWER = "[Y]"
_SLOTS = re.compile("(" + re.escape(SUBJECT) + "|" + re.escape(ANSWER) + ")")


class Statement(NamedTuple):
    """A filled template and where its answer lies (``text[answer_start:answer_end]``)."""

    text: str
    answer_start: int
    answer_end: int


def fill_statement(template: str, subject: str, answer: str, capitalize: bool = True) -> Statement:
    """``template`` with every ``[X]`` replaced by ``subject`` and its one ``[Y]`` by ``answer``,
    the first character upper-cased where ``capitalize`` (lm-pub-quiz's ``capitalize``: only that
    character, the rest as it is). Labels are put in as given (no stripping), as lm-pub-quiz
    does. A template without exactly one ``[Y]`` is an error: a statement's answer is one span."""
    count = template.count(ANSWER)
    if count != 1:
        raise KnowprobeError(f"template {template!r} has {count} {ANSWER} (a statement needs exactly one)")
    parts, span, at = [], (0, 0), 0
    for match in _SLOTS.finditer(template):
        parts.append(template[at : match.start()])
        value = subject if match.group() == SUBJECT else answer
        start = sum(len(part) for part in parts)
        if match.group() == ANSWER:
            span = (start, start + len(value))
        parts.append(value)
        at = match.end()
    parts.append(template[at:])
    text = "".join(parts)
    if capitalize and text:
        first = text[0].upper()
        # an upper case of another length ("ß" -> "SS") moves what follows it
        shift = len(first) - 1
        text = first + text[1:]
        span = (span[0] + shift if span[0] > 0 else 0, span[1] + shift)
    return Statement(text, span[0], span[1])
