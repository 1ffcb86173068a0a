"""knowprobe.cost: what the full run costs, per study and in total, from resources/full_run_cost.yaml."""

from __future__ import annotations

from knowprobe import cost

from conftest import ROOT

TABLE = {
    "downloads": {"dump": {"gb": 100}, "lama": {"gb": 0.5}, "norms": {"gb": 1}},
    "models": {"bert": 0.4, "gpt2": 0.5},
    "studies": {
        "a": {
            "downloads": ["dump", "lama"],
            "writes_gb": {"gb": 10},
            "minutes": {"parse": {"minutes": 50}, "probe": {"minutes": 20}},
        },
        "b": {
            "downloads": ["dump"],
            "writes_gb": {"gb": None},
            "minutes": {"parse": {"minutes": 50}, "build": {"minutes": None}},
        },
    },
}


def test_a_shared_download_and_stage_count_once_in_the_total():
    run = cost.costs(TABLE, ["a", "b"], {"a": ["bert"], "b": ["bert", "gpt2", "unlisted/model"]})
    assert run["a"].downloads_gb == 100.9 and run["a"].minutes == 70 and run["a"].unmeasured == []
    assert run["b"].downloads_gb == 100.9 and run["b"].writes_gb is None
    assert run["b"].unmeasured == ["build", "the size of unlisted/model"]
    total = run["total"]
    assert round(total.downloads_gb, 6) == 101.4 and total.minutes == 70 and total.writes_gb is None
    assert cost.lines(run)[-1] == "total: downloads 101 GB, writes not measured, time 70 min + 2 stages not measured"


def test_the_projects_table_names_a_source_for_every_number():
    table = cost.load(ROOT / "resources/full_run_cost.yaml")
    for item in table["downloads"].values():
        assert item["gb"] > 0 and item["source"]
    for study in table["studies"].values():
        assert set(study["downloads"]) <= set(table["downloads"]) and study["writes_gb"]["source"]
        assert all(stage["source"] for stage in study["minutes"].values())
