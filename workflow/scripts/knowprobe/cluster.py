"""What a run on a cluster says when the scheduler killed a job for its limits: read from the
run's log (Snakemake's, which names each failed job's SLURM log) and those SLURM logs, one line
per job naming the rule, the limit and what to change. SLURM's plain "FAILED" (without slurmdbd
there is no reason at all) leaves a user guessing between a bug and a limit."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# a failed job's block in Snakemake's log: its rule, and the SLURM log among its logs
FAILED_JOB = re.compile(
    r"^Error in rule (\w+):\n(?:    .*\n)*?    log: [^\n]*?(\S+/slurm_logs/\S+?/(\d+)\.log)", re.MULTILINE
)
# slurmstepd's lines in the job's log
OVER_MEMORY = re.compile(r"exceeded memory limit \((\d+) > (\d+)\)")
OVER_TIME = re.compile(r"CANCELLED AT \S+ DUE TO TIME LIMIT")


@dataclass(frozen=True)
class LimitKill:
    rule: str
    job_id: str
    limit: str  # "memory" or "time"
    used_mb: float | None = None
    limit_mb: float | None = None


def limit_kills(run_log: str) -> list[LimitKill]:
    """The jobs of a run that the scheduler killed for their memory or time limit, in order, each once."""
    found = {}
    for rule, slurm_log, job_id in FAILED_JOB.findall(run_log):
        path = Path(slurm_log)
        text = path.read_text(errors="replace") if path.is_file() else ""
        if memory := OVER_MEMORY.search(text):
            used, limit = (int(value) / 2**20 for value in memory.groups())
            found[job_id] = LimitKill(rule, job_id, "memory", used, limit)
        elif OVER_TIME.search(text):
            found[job_id] = LimitKill(rule, job_id, "time")
    return list(found.values())


def limit_line(kill: LimitKill, runtime: object = None) -> str:
    """One line for a job killed for its limit: the rule, the SLURM job, the limit, what to change."""
    if kill.limit == "memory":
        what = f"went over its memory limit (mem_mb={kill.limit_mb:.0f}, used {kill.used_mb:.0f} MB)"
        key = "mem_mb"
    else:
        what = f"ran out of its time limit (runtime={runtime} minutes)" if runtime else "ran out of its time limit"
        key = "runtime"
    return (
        f"knowprobe: rule {kill.rule} (SLURM job {kill.job_id}) {what}: raise {key} for {kill.rule} in the "
        "profile's set-resources and run the same command: it goes on where it stopped"
    )
