"""What a full run will cost before it starts: downloads and disk in GB, time per stage on one node
of 16 cores with one GPU, per study and in total (``resources/full_run_cost.yaml``, where each
number says where it comes from). The dry run prints it; the README's table is held to it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .io import KnowprobeError


@dataclass
class Cost:
    """One study's cost, or the run's: GB downloaded, GB written under results/ (None: not measured), minutes of
    the measured or projected stages, and the stages whose time is not measured."""

    downloads_gb: float = 0.0
    writes_gb: float | None = 0.0
    minutes: float = 0.0
    unmeasured: list[str] = field(default_factory=list)


def load(path: str | Path) -> dict:
    try:
        return yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise KnowprobeError(f"{path}: cannot read the cost table ({error})") from error


def costs(table: dict, studies: list[str], hub_ids: dict[str, list[str]]) -> dict[str, Cost]:
    """Each configured study's cost and the run's ("total"): a download, a stage or what a stage
    writes that several studies share (the Wikidata dump, its parse, its tables) counts once in the
    total. ``hub_ids``: the hub models each study downloads (local models cost nothing here)."""
    out, items, written, models, stages = {}, set(), set(), set(), {}
    for study in studies:
        entry = table["studies"].get(study)
        if entry is None:
            continue
        study_models = set(hub_ids.get(study, []))
        unknown = study_models - set(table["models"])
        cost = Cost(
            downloads_gb=sum(table["downloads"][item]["gb"] for item in entry["downloads"])
            + sum(table["models"].get(hub_id, 0.0) for hub_id in study_models),
            writes_gb=writes(table, entry["writes"]),
            minutes=sum(s["minutes"] for s in entry["minutes"].values() if s["minutes"] is not None),
            unmeasured=[name for name, s in entry["minutes"].items() if s["minutes"] is None]
            + [f"the size of {hub_id}" for hub_id in sorted(unknown)],
        )
        out[study] = cost
        items |= set(entry["downloads"])
        written |= set(entry["writes"])
        models |= study_models
        stages.update(entry["minutes"])
    out["total"] = Cost(
        downloads_gb=sum(table["downloads"][item]["gb"] for item in items)
        + sum(table["models"].get(hub_id, 0.0) for hub_id in models),
        writes_gb=writes(table, sorted(written)),
        minutes=sum(s["minutes"] for s in stages.values() if s["minutes"] is not None),
        unmeasured=sorted({name for cost in out.values() for name in cost.unmeasured}),
    )
    return out


def writes(table: dict, items: list[str]) -> float | None:
    """GB that the stages of ``items`` write under results/ (None where one is not measured)."""
    sizes = [table["writes"][item]["gb"] for item in items]
    return None if None in sizes else sum(sizes)


def gb(value: float | None) -> str:
    return "not measured" if value is None else f"{value:,.0f} GB" if value >= 10 else f"{value:.1f} GB"


def hours(minutes: float) -> str:
    return f"{minutes / 60:.1f} h" if minutes >= 90 else f"{minutes:.0f} min"


def stages(n: int) -> str:
    return f"{n} stage" if n == 1 else f"{n} stages"


def lines(run: dict[str, Cost]) -> list[str]:
    """One line per study and one for the whole run, as the dry run prints them."""
    out = []
    for name, cost in run.items():
        if not cost.unmeasured:
            time = hours(cost.minutes)
        elif cost.minutes:
            time = f"{hours(cost.minutes)} + {stages(len(cost.unmeasured))} not measured"
        else:
            time = f"not measured ({stages(len(cost.unmeasured))})"
        out.append(f"{name}: downloads {gb(cost.downloads_gb)}, writes {gb(cost.writes_gb)}, time {time}")
    return out
