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


def test_a_run_counts_only_what_it_has_to_do():
    rules = {
        "downloads": {
            "dump": {"rules": ["get_dump"], "gb": 100},
            "lama": {"rules": ["get_lama"], "gb": 0.5},
            "norms": {"rules": ["get_norms"], "gb": 1},
        },
        "writes": {"parsed": {"rules": ["parse"], "scale": "dump", "gb": 8}, "probes": {"rules": ["probe"], "gb": 2}},
        "models": {"bert": 0.4},
        "studies": {
            "a": {
                "downloads": ["dump", "lama"],
                "writes": ["parsed", "probes"],
                "minutes": {"parse": {"rules": ["parse"], "scale": "dump", "minutes": 50}},
            }
        },
    }
    # the offline demo: a small local dump, nothing downloaded, no stage at the full size
    assert cost.present(rules, {"parse", "other"}, {"parse", "other"}, {"dump": 1e-6}) == set()
    assert cost.costs(rules, ["a"], {}, set()) == {}
    # the full dump downloaded by an earlier run (its rule is in the DAG, done): the parse counts, no download
    again = cost.present(rules, {"parse"}, {"parse", "get_dump"}, {"dump": None})
    assert again == {"parsed", "parse"}
    assert cost.lines(cost.costs(rules, ["a"], {}, again)) == [
        "a: downloads 0.0 GB, writes 8.0 GB, time 50 min",
        "total: downloads 0.0 GB, writes 8.0 GB, time 50 min",
    ]
    # a local copy of the full dump is the full size; a model to download counts with the stage
    local = cost.present(rules, {"parse", "get_lama"}, {"parse", "get_lama"}, {"dump": 90})
    assert local == {"lama", "parsed", "parse"}
    run = cost.costs(rules, ["a"], {"a": ["bert"]}, local)
    assert round(run["total"].downloads_gb, 6) == 0.9 and run["total"].minutes == 50
    assert cost.gb(0.01) == "0.01 GB" and cost.gb(0) == "0.0 GB" and cost.gb(None) == "not measured"


def test_ones_own_facts_are_costed_from_their_own_inputs():
    """Issue 55: twenty local facts probed by BERT from the hub printed "lpaqa: downloads 0.8 GB,
    writes 65 GB, time 76 min": downloading LAMA's common vocabulary (0.2 MB) counted as LAMA
    downloaded, so the probe was costed at the full size."""
    table = cost.load(ROOT / "resources/full_run_cost.yaml")
    to_run = {"download_model", "lpaqa_download_common_vocab", "lpaqa_import_facts", "lpaqa_probe", "lpaqa_tables"}
    local = {"lama": 2e-6}  # resources/examples/own_facts: a few KB
    present = cost.present(table, to_run, to_run, local)
    assert present == {"lama_vocab"}
    run = cost.costs(table, ["lpaqa"], {"lpaqa": ["bert-base-cased"]}, present)
    assert cost.lines(run) == [
        "lpaqa: downloads 0.4 GB; no stage at the full reproduction's size",
        "total: downloads 0.4 GB; no stage at the full reproduction's size",
    ]
    # LAMA's own data downloaded: the probe is the full run's
    full = cost.present(table, to_run | {"lpaqa_download_lama"}, to_run | {"lpaqa_download_lama"}, {})
    assert {"lama", "lpaqa_probes", "probing (both BERTs)"} <= full
    assert cost.gb(0.0002) == "0.2 MB"
