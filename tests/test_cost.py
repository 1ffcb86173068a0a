"""knowprobe.cost: what the full run costs, per study and in total, from resources/full_run_cost.yaml."""

from __future__ import annotations

from knowprobe import cost

from conftest import ROOT

TABLE = {
    "downloads": {"dump": {"gb": 100}, "lama": {"gb": 0.5}, "norms": {"gb": 1}},
    "writes": {"parsed": {"gb": 8}, "probes": {"gb": 2}, "built": {"gb": None}},
    "models": {"bert": 0.4, "gpt2": 0.5},
    "studies": {
        "a": {
            "downloads": ["dump", "lama"],
            "writes": ["parsed", "probes"],
            "minutes": {"parse": {"minutes": 50}, "probe": {"minutes": 20}},
        },
        "b": {
            "downloads": ["dump"],
            "writes": ["parsed", "built"],
            "minutes": {"parse": {"minutes": 50}, "build": {"minutes": None}},
        },
    },
}


def test_a_shared_download_and_stage_count_once_in_the_total():
    run = cost.costs(TABLE, ["a", "b"], {"a": ["bert"], "b": ["bert", "gpt2", "unlisted/model"]})
    assert run["a"].downloads_gb == 100.9 and run["a"].minutes == 70 and run["a"].unmeasured == []
    assert run["a"].writes_gb == 10 and run["b"].downloads_gb == 100.9 and run["b"].writes_gb is None
    # what a shared stage writes, too, counts once: 8 + 2 + 5, not 8 + 2 + 8 + 5
    measured = {**TABLE, "writes": {**TABLE["writes"], "built": {"gb": 5}}}
    assert cost.costs(measured, ["a", "b"], {})["total"].writes_gb == 15
    assert run["b"].unmeasured == ["build", "the size of unlisted/model"]
    total = run["total"]
    assert round(total.downloads_gb, 6) == 101.4 and total.minutes == 70 and total.writes_gb is None
    assert cost.lines(run)[-1] == "total: downloads 101 GB, writes not measured, time 70 min + 2 stages not measured"


def test_the_projects_table_names_a_source_for_every_number():
    table = cost.load(ROOT / "resources/full_run_cost.yaml")
    for item in [*table["downloads"].values(), *table["writes"].values()]:
        assert item["gb"] > 0 and item["source"]
    for study in table["studies"].values():
        assert set(study["downloads"]) <= set(table["downloads"]) and set(study["writes"]) <= set(table["writes"])
        assert all(stage["source"] for stage in study["minutes"].values())
