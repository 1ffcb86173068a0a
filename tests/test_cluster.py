"""knowprobe.cluster: a job the scheduler killed for its limits, told in one line."""

from __future__ import annotations

from knowprobe import cluster

RUN_LOG = """\
Error in rule stest_probe:
    message: SLURM-job '12' failed, SLURM status is: 'FAILED'.
    jobid: 3
    output: results/stest/scores/tiny-demo-bert.parquet
    log: logs/stest/probe/tiny-demo-bert.log, {slurm}/rule_stest_probe/tiny-demo-bert/12.log (check log file(s))
    external_jobid: 12
Error in rule lpaqa_probe:
    message: SLURM-job '13' failed, SLURM status is: 'TIMEOUT'.
    log: logs/lpaqa/probe/x.log, {slurm}/rule_lpaqa_probe/x/13.log (check log file(s) for error details)
Error in rule comps_probe:
    message: SLURM-job '14' failed, SLURM status is: 'FAILED'.
    log: logs/comps/probe/x.log, {slurm}/rule_comps_probe/x/14.log (check log file(s) for error details)
"""


def test_jobs_killed_for_memory_or_time_are_told_apart_from_other_failures(tmp_path):
    slurm = tmp_path / "slurm_logs"
    logs = {
        "rule_stest_probe/tiny-demo-bert/12.log": "slurmstepd-vm: error: StepId=12.batch exceeded memory limit "
        "(205656064 > 104857600), being killed\n",
        "rule_lpaqa_probe/x/13.log": "slurmstepd: error: *** JOB 13 ON vm CANCELLED AT 2026-11-24T21:00:00 "
        "DUE TO TIME LIMIT ***\n",
        "rule_comps_probe/x/14.log": "knowprobe error: something else\n",  # a failure of its own: not a limit
    }
    for name, text in logs.items():
        (slurm / name).parent.mkdir(parents=True, exist_ok=True)
        (slurm / name).write_text(text)
    kills = cluster.limit_kills(RUN_LOG.format(slurm=slurm))
    assert [(k.rule, k.job_id, k.limit) for k in kills] == [
        ("stest_probe", "12", "memory"),
        ("lpaqa_probe", "13", "time"),
    ]
    assert cluster.limit_line(kills[0]) == (
        "knowprobe: rule stest_probe (SLURM job 12) went over its memory limit (mem_mb=100, used 196 MB): raise "
        "mem_mb for stest_probe in the profile's set-resources and run the same command: it goes on where it stopped"
    )
    assert "ran out of its time limit (runtime=240 minutes): raise runtime for lpaqa_probe" in cluster.limit_line(
        kills[1], 240
    )
