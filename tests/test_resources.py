"""knowprobe.resources: the memory and time the heavy rules ask a scheduler for (issue 30)."""

from __future__ import annotations

import re

from knowprobe import resources

from conftest import smk_rules

NODE_MB = 128 * 1024  # the full run's node: 16 cores, 128 GB (README, resources/full_run_cost.yaml)


def test_a_job_asks_for_its_fixed_part_and_its_share_of_the_inputs_with_a_margin():
    scaling = resources.Scaling(fixed_mb=100, mb_per_gb=1000, fixed_minutes=1, minutes_per_gb=6, mb_per_thread=50)
    # small jobs: the preamble's peak, which every job reaches first
    assert scaling.mem_mb(0) == round(resources.PREAMBLE_PEAK_MB * resources.MEMORY_MARGIN)
    assert scaling.mem_mb(2.0) == round((resources.START_MB + 2100) * resources.MEMORY_MARGIN)
    assert scaling.mem_mb(2.0, threads=3) == round((resources.START_MB + 2200) * resources.MEMORY_MARGIN)
    assert scaling.mem_mb(2.0, attempt=2) == 2 * scaling.mem_mb(2.0)  # the retry after a kill: twice
    assert scaling.runtime(0) == resources.MIN_MINUTES and scaling.runtime(10) == 61 * resources.TIME_MARGIN
    assert scaling.runtime(10, attempt=2) == 2 * scaling.runtime(10)


def test_every_heavy_rule_asks_by_its_own_measurements_and_fits_the_full_runs_node():
    """Each rule whose resources are scaled() names itself, every measured rule is one of them,
    and at the inputs of the full reproduction (the rehearsal's projection) each job fits one
    node of the full run with its margin, and a day."""
    scaled = {}
    for _, name, body in smk_rules():
        found = re.findall(r'\*\*scaled\("(\w+)"', body)
        if found:
            scaled[name] = found
    assert scaled and all(found == [name] for name, found in scaled.items()), scaled
    assert set(scaled) == set(resources.MEASURED) == set(resources.FULL_INPUT_GB)
    for rule, scaling in resources.MEASURED.items():
        gigabytes = resources.FULL_INPUT_GB[rule]
        threads = 16 if rule == "wikidata_index" else 1
        assert scaling.mem_mb(gigabytes, threads) < NODE_MB, rule
        assert scaling.runtime(gigabytes) < 24 * 60, rule
        assert scaling.mb_per_gb > 0 and scaling.minutes_per_gb >= 0, rule  # each grows with its inputs
