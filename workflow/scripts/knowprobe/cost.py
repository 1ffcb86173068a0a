"""What a full run will cost before it starts: downloads and disk in GB, time per stage on one node
of 16 cores with one GPU, per study and in total (``resources/full_run_cost.yaml``, where each
number says where it comes from). A dry run prints what the run it plans has to do of it (``present``):
nothing to download for the offline demo, a full run's figures only for a run at that size; the
README's table is held to it."""

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


FULL_SIZE = 0.5  # a local copy of at least this share of a download's size is the full run's input


def present(table: dict, to_run: set[str], in_dag: set[str], local_gb: dict[str, float | None]) -> set[str]:
    """The items of ``table`` (download, write and stage names) that a planned run has to do:
    a download where one of its rules has a job to run (``to_run``: rule names); a write or a
    stage where one of its rules has a job to run and its ``scale`` input is the full one: downloaded
    (a rule of the download is in the DAG, ``in_dag``, to run or done) or a local copy of at least
    half the download's size (``local_gb``: the size of each download's local copy, None without one).
    A run on small local inputs (the offline demo) has none of the full run's costs."""

    def full(item: str) -> bool:
        download = table["downloads"][item]
        if in_dag & set(download.get("rules", [])):
            return True
        size = local_gb.get(item)
        return size is not None and size >= FULL_SIZE * download["gb"]

    out = {name for name, item in table["downloads"].items() if to_run & set(item.get("rules", []))}
    stages = [*table["writes"].items(), *(s for study in table["studies"].values() for s in study["minutes"].items())]
    for name, item in stages:
        runs = to_run & set(item.get("rules", []))
        if runs and (item.get("scale") is None or full(item["scale"])):
            out.add(name)
    return out


def costs(
    table: dict, studies: list[str], hub_ids: dict[str, list[str]], present: set[str] | None = None
) -> dict[str, Cost]:
    """Each configured study's cost and the run's ("total"): a download, a stage or what a stage
    writes that several studies share (the Wikidata dump, its parse, its tables) counts once in the
    total. ``hub_ids``: the hub models each study downloads (local models cost nothing here);
    ``present``: the items this run has to do (``present()``; None: all, the full run from scratch).
    A study with nothing to do is left out."""
    out, items, written, models, stages = {}, set(), set(), set(), {}
    for study in studies:
        entry = table["studies"].get(study)
        if entry is None:
            continue
        study_models = set(hub_ids.get(study, []))
        downloads, study_writes, minutes = entry["downloads"], entry["writes"], entry["minutes"]
        if present is not None:
            downloads = [item for item in downloads if item in present]
            study_writes = [item for item in study_writes if item in present]
            minutes = {name: stage for name, stage in minutes.items() if name in present}
            if not (downloads or study_writes or minutes or study_models):
                continue
        unknown = study_models - set(table["models"])
        cost = Cost(
            downloads_gb=sum(table["downloads"][item]["gb"] for item in downloads)
            + sum(table["models"].get(hub_id, 0.0) for hub_id in study_models),
            writes_gb=writes(table, study_writes),
            minutes=sum(s["minutes"] for s in minutes.values() if s["minutes"] is not None),
            unmeasured=[name for name, s in minutes.items() if s["minutes"] is None]
            + [f"the size of {hub_id}" for hub_id in sorted(unknown)],
        )
        out[study] = cost
        items |= set(downloads)
        written |= set(study_writes)
        models |= study_models
        stages.update(minutes)
    if not out:
        return out
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
    if value is None:
        return "not measured"
    if 0 < value < 0.01:  # a vocabulary of 0.2 MB is not "0.00 GB"
        return f"{value * 1e3:.1f} MB"
    if 0 < value < 0.1:  # a release of 10 MB is not "0.0 GB"
        return f"{value:.2f} GB"
    return f"{value:,.0f} GB" if value >= 10 else f"{value:.1f} GB"


def hours(minutes: float) -> str:
    return f"{minutes / 60:.1f} h" if minutes >= 90 else f"{minutes:.0f} min"


def stages(n: int) -> str:
    return f"{n} stage" if n == 1 else f"{n} stages"


def lines(run: dict[str, Cost]) -> list[str]:
    """One line per study and one for the whole run, as the dry run prints them."""
    out = []
    for name, cost in run.items():
        if not (cost.minutes or cost.unmeasured or cost.writes_gb):
            # only downloads (hub models, a vocabulary): its stages run on small inputs of its own
            out.append(f"{name}: downloads {gb(cost.downloads_gb)}; no stage at the full reproduction's size")
            continue
        if not cost.unmeasured:
            time = hours(cost.minutes)
        elif cost.minutes:
            time = f"{hours(cost.minutes)} + {stages(len(cost.unmeasured))} not measured"
        else:
            time = f"not measured ({stages(len(cost.unmeasured))})"
        out.append(f"{name}: downloads {gb(cost.downloads_gb)}, writes {gb(cost.writes_gb)}, time {time}")
    return out
