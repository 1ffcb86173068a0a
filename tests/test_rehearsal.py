"""The full-scale rehearsal (benchmarks/rehearsal.py) is a benchmark of minutes to an hour that CI
does not run; this runs it at a tiny size, so that the generators, the config it writes, the
workflow run and the report it reads from the jobs' logs cannot rot."""

import json
import subprocess
import sys

from conftest import ROOT


def test_the_rehearsal_runs_at_a_tiny_size(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "rehearsal.py"),
            "--scales",
            "0.00002",
            "--baseline",
            "none",
            "--index-threads",
            "1",
            "--workdir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    report = json.loads((tmp_path / "report.json").read_text())
    rules = {row["rule"]: row for row in report["rules"]}
    # every stage the issue names ran at both sizes and left its measures in its log
    for rule in [
        "wikidata_index",
        "wikidata_chunk",
        "wikidata_gather",
        "lpaqa_trex_train",
        "lpaqa_wikipedia_extract",
        "lpaqa_distant_supervision",
        "lpaqa_mine_prompts",
        "stest_build",
        "lpaqa_probe",
        "stest_probe",
    ]:
        measured = rules[rule]["2e-05"]
        assert measured["jobs"] >= 1 and measured["peak_rss_mb"] > 50 and measured["cpu_s"] > 0, (rule, measured)
        # projected to full size, but for the GPU rules, whose figures come from the GPU benchmarks
        assert (rules[rule].get("full_peak_rss_mb", 0) > 0) == (rule not in ("lpaqa_probe", "stest_probe")), rule
    assert rules["wikidata_chunk"]["2e-05"]["jobs"] == 4 and rules["wikidata_chunk"]["full_jobs"] == 16
    counts = report["runs"]["2e-05"]["counts"]
    assert counts["trex_train_facts"] > 0 and counts["matched_sentences"] > 0 and counts["stest_triples"] > 0
    assert counts["probe_pairs"] > 0 and report["index_pass"][0]["mb_per_s"] > 0
    text = (tmp_path / "report.md").read_text()
    assert "| wikidata_chunk | dump_bytes_per_chunk | 16 |" in text and "index pass" in text
