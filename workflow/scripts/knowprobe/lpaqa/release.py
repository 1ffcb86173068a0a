"""LPAQA's released prompts (github.com/jzbjyb/LPAQA, ``prompt/``) as prompt sets of their own, so
that knowprobe's ensembles can be run on the paper's own prompts and told apart from its mining.

- ``prompt/mine/P*.jsonl``: the mined prompts (``{"template", "weight"}``; the weight is LPAQA's
  Opti weight for BERT-base);
- ``prompt/paraphrase/P*.jsonl``: paraphrases of each relation's top mined prompt (Mine+Para);
- ``prompt/manual_paraphrase/P*.txt``: the manual prompt and its paraphrases, one a line (Man+Para).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import KnowprobeError
from ..prompts import prompt_table, template_problem

log = logging.getLogger(__name__)

FOLDERS = {"lpaqa_mine": "mine", "lpaqa_paraphrase": "paraphrase", "lpaqa_manual_paraphrase": "manual_paraphrase"}


def read_folder(directory: str | Path, prompt_set: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One released folder as a prompt set (file order is rank; score: LPAQA's weight, NaN for
    the .txt files), and the lines left out (``relation, line, template, reason``)."""
    folder = Path(directory) / FOLDERS[prompt_set]
    files = sorted(folder.glob("P*.jsonl")) + sorted(folder.glob("P*.txt"))
    if not files:
        raise KnowprobeError(f"{folder}: no P*.jsonl or P*.txt files (LPAQA's prompt/{FOLDERS[prompt_set]})")
    rows, dropped = [], []
    for path in files:
        relation, seen = path.name.split(".")[0], set()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            template, weight = line.strip(), float("nan")
            if path.suffix == ".jsonl":
                try:
                    record = json.loads(line)
                    template, weight = record["template"], float(record.get("weight", np.nan))
                except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
                    raise KnowprobeError(f"{path}:{number}: not a prompt record ({error})") from None
            problem = template_problem(template)
            if problem or template in seen:
                dropped.append(
                    {"relation": relation, "line": number, "template": template, "reason": problem or "duplicate"}
                )
                continue
            seen.add(template)
            rank = len(seen) - 1
            rows.append(
                {
                    "relation": relation,
                    "template": template,
                    "source": f"lpaqa-{FOLDERS[prompt_set]}",
                    "rank": rank,
                    "score": weight,
                }
            )
    table = prompt_table(rows)
    log.info(
        "%s: %d prompts of %d relations from %s; %d lines left out",
        prompt_set,
        len(table),
        table["relation"].nunique(),
        folder,
        len(dropped),
    )
    return table, pd.DataFrame(dropped, columns=["relation", "line", "template", "reason"])
