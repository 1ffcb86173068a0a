"""A run stopped by Ctrl-C exits with status 130 (128 + SIGINT), as every Unix tool does, not 1.

Snakemake stops the running jobs on Ctrl-C, logs that it is "Terminating processes on user
request" and ends as a failed run: its command line exits with ``sys.exit(1)``. The Snakefile's
``onerror`` hook, which runs before that, reads the run's log and, where the run was interrupted,
has that exit say 130. Only the Snakefile imports this module (no rule's code: editing it reruns
nothing)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

# Snakemake's line on Ctrl-C (snakemake.scheduling.job_scheduler), in the run's log
INTERRUPTED = "Terminating processes on user request"
STATUS = 130  # 128 + SIGINT (2), what a shell reports for a command that Ctrl-C ended


def interrupted(run_log) -> bool:
    """Whether the run whose log file(s) ``run_log`` names was stopped by Ctrl-C (Snakemake 9
    passes its log files as a list, earlier ones the one path)."""
    paths = [run_log] if isinstance(run_log, (str, os.PathLike)) else list(run_log or [])
    return any(INTERRUPTED in Path(path).read_text(errors="replace") for path in paths if Path(path).is_file())


def exit_as_interrupted(run_log) -> bool:
    """Where the run was interrupted, make the failed run's exit (``sys.exit(1)``, the next exit of
    Snakemake's command line) exit with STATUS instead; whether it was."""
    if not interrupted(run_log):
        return False
    failed_exit = sys.exit

    def exit(status=None):
        failed_exit(STATUS if status == 1 else status)

    sys.exit = exit
    return True
