"""The live display in a terminal (snakemake_logger_plugin_knowprobe): it keeps the running and
failed rules in view at 80×24, folds the others into counts, and Ctrl-C prints one line.

The terminal is a pseudo-terminal read by pyte, a terminal emulator: what the test reads is the
screen a user would see, not the escape codes."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import textwrap
import time
from pathlib import Path

import pytest
from snakemake_logger_plugin_knowprobe import JOB_INTERRUPTED, TOTAL, RuleState, display_rows, stopped_by_ctrl_c

from conftest import ROOT, default_sigint

pyte = pytest.importorskip("pyte", reason="pyte (a terminal emulator, in the test extra) reads the screen")


def states(running: int, finished: int, waiting: int, failed: int = 0, now: float = 100.0) -> dict[str, RuleState]:
    rules = {TOTAL: RuleState(running + finished + waiting + failed)}
    for i in range(running + finished + waiting + failed):
        rule = rules[f"rule_{i:02d}"] = RuleState(1)
        if i < running + finished + failed:
            rule.started = now - 50 + i  # the rules started one second apart
        if i < running:
            rule.running = 1
        elif i < running + finished:
            rule.completed, rule.ended = 1, now - 10
        elif i < running + finished + failed:
            rule.failed, rule.ended = True, now - 5
    return rules


def test_the_rows_keep_running_and_failed_rules_and_fold_the_rest():
    rows = display_rows(states(running=3, finished=40, waiting=7, failed=1), run_started=0.0, now=100.0, height=21)
    names = [row[1] for row in rows]
    assert names == ["total", "rule 43", "rule 00", "rule 01", "rule 02", "40 rules finished, 7 waiting"]
    assert rows[1][2] == "failed" and rows[2][2] == "1 running"
    # a rule's time is its own: rule_00 started at 50 s, the run at 0 s; the failed one ended at 95 s
    assert rows[0][5] == 100.0 and rows[2][5] == 50.0 and rows[1][5] == 2.0


def test_running_rules_that_do_not_fit_are_counted_on_the_last_line():
    rows = display_rows(states(running=30, finished=2, waiting=0), run_started=0.0, now=100.0, height=21)
    assert len(rows) == 21
    assert rows[-2][1] == "12 more rules running" and rows[-1][1] == "2 rules finished, 0 waiting"
    assert [row[1] for row in rows[1:-2]] == [f"rule {i:02d}" for i in range(18)]  # longest running first


def test_the_display_reads_the_line_knowprobe_io_logs_on_ctrl_c(tmp_path):
    """The display keeps its own copy of the line knowprobe.io logs when Ctrl-C stops a job (a
    constant in io.py, a code input of every rule, would rerun every finished job); this holds
    the two equal, and the display's reading of a log's last lines."""
    import knowprobe.io

    assert f'log.warning("{JOB_INTERRUPTED}")' in Path(knowprobe.io.__file__).read_text()
    log = tmp_path / "job.log"
    log.write_text(f"12:00:00 INFO working\n12:00:01 WARNING {JOB_INTERRUPTED}\n12:00:01 INFO resources: ...\n")
    assert stopped_by_ctrl_c(str(log)) and not stopped_by_ctrl_c(str(tmp_path / "absent.log"))


SNAKEFILE = """
from knowprobe.interrupt import exit_as_interrupted

RULES = [f"step_{i:02d}" for i in range(RULE_COUNT)]

onerror:
    exit_as_interrupted(log)  # as knowprobe's Snakefile does

rule all:
    input: expand("out/{rule}.txt", rule=RULES)

for name in RULES:
    rule:
        name: name
        output: f"out/{name}.txt"
        log: f"logs/{name}.log"
        script: "job.py"
"""

# a job of a knowprobe rule: its script imports knowprobe and logs through rule_logging
JOB = """
import time
from pathlib import Path
from knowprobe.io import rule_logging

with rule_logging(snakemake.log[0]) as log:
    Path("running").mkdir(exist_ok=True)
    Path("running", snakemake.rule).touch()
    time.sleep(SECONDS)
    Path(snakemake.output[0]).write_text("done\\n")
    Path("running", snakemake.rule).unlink()
"""


def workflow(tmp_path: Path, rules: int, seconds: float) -> Path:
    (tmp_path / "Snakefile").write_text(SNAKEFILE.replace("RULE_COUNT", str(rules)))
    (tmp_path / "job.py").write_text(textwrap.dedent(JOB).replace("SECONDS", str(seconds)))
    return tmp_path


def controlling_terminal() -> None:
    """In the child: a session of its own whose controlling terminal is the pseudo-terminal (its
    stdin), so that a Ctrl-C typed into it reaches Snakemake and its jobs as from a keyboard."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    default_sigint()  # as from a keyboard, even where the suite was started in the background


def watch(
    cwd: Path, args: list[str], until, interrupt: bool = False, timeout: float = 240
) -> tuple[list[str], list[str], int]:
    """Run Snakemake in an 80×24 pseudo-terminal. Returns the screen when ``until(cwd)`` first held
    (Ctrl-C is sent then, with ``interrupt``), every line the terminal showed in order, and the exit code."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "snakemake", "--logger", "knowprobe", *args],
        cwd=cwd,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**os.environ, "TERM": "xterm-256color", "PYTHONPATH": str(ROOT / "workflow/scripts")},
        preexec_fn=controlling_terminal,
    )
    os.close(follower)
    screen = pyte.HistoryScreen(80, 24, history=100000)
    stream = pyte.ByteStream(screen)
    seen, held_since, deadline = None, None, time.time() + timeout
    while time.time() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.1)
        if ready:
            try:
                data = os.read(leader, 65536)
            except OSError:  # EIO: the last writer is gone
                break
            if not data:
                break
            stream.feed(data)
        if seen is None and until(cwd):
            held_since = held_since or time.time()
            # the display refreshes four times a second; the screen is read between two frames
            # (0.1 s without output), never from a frame half fed (one seen on a loaded machine)
            if time.time() - held_since > 1.0 and not ready:
                seen = list(screen.display)
                if interrupt:
                    # Ctrl-C typed: the terminal echoes "^C" where the cursor is and signals the
                    # foreground process group
                    os.write(leader, b"\x03")
    os.close(leader)
    code = process.wait(timeout=60)
    history = ["".join(line[column].data for column in sorted(line)) for line in screen.history.top] + list(
        screen.display
    )
    return seen or [], [line.rstrip() for line in history], code


def running(cwd: Path) -> set[str]:
    return {path.name for path in (cwd / "running").glob("*")} if (cwd / "running").exists() else set()


def test_an_80x24_terminal_shows_every_running_rule_or_counts_it(tmp_path):
    """Issue 28: the rich plugin's list of bars outgrew the terminal and rich cut its newest rows,
    the running ones. 24 jobs run at once in 24 lines: 18 are named, the others counted."""
    cwd = workflow(tmp_path, rules=24, seconds=8)
    screen, _, code = watch(cwd, ["--cores", "24"], until=lambda cwd: len(running(cwd)) == 24)
    assert code == 0
    text = "\n".join(screen)
    assert len(screen) == 24 and "knowprobe" in text and "╰" in text, text  # the panel is whole
    named = {
        name for name in running(cwd) | {f"step_{i:02d}" for i in range(24)} if name.replace("_", " ") + " " in text
    }
    assert "total" in text and "24 running" in text, text
    assert len(named) == 18 and f"{24 - 18} more rules running" in text, text
    assert "0 rules finished, 1 waiting" in text, text  # the rule all waits


def test_ctrl_c_prints_one_line_naming_the_stopped_jobs(tmp_path):
    cwd = workflow(tmp_path, rules=3, seconds=60)
    _, lines, code = watch(cwd, ["--cores", "3"], until=lambda cwd: len(running(cwd)) == 3, interrupt=True)
    assert code == 130, code  # issue 55: 128 + SIGINT, as a shell reports Ctrl-C, not 1
    text = "\n".join(lines)
    # issue 55: the echoed "^C" wrapped the bottom border to a new line, and the display, erased
    # from there, left its top border above the one line
    assert "knowprobe ─" not in text and "╭" not in text, text
    assert "Traceback" not in text and "KeyboardInterrupt" not in text and "Failed" not in text, text
    assert "Error in rule" not in text and "Complete log" not in text, text
    said = " ".join(text[text.index("Interrupted (Ctrl-C)") :].split())
    assert all(f"step_{i:02d}" in said for i in range(3)), said
    assert "Run the same command again: it goes on where this run stopped." in said
    # each job's log says it was interrupted, not that it failed
    for i in range(3):
        assert "interrupted (Ctrl-C)" in (cwd / f"logs/step_{i:02d}.log").read_text()
