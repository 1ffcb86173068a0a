"""knowprobe's live display of a run in a terminal (``--logger knowprobe``; the default profile
turns it on where stderr is a terminal).

It is snakemake-logger-plugin-rich's handler with two things changed, both because a long run
outgrows the terminal:

* The display fits the terminal. The rich plugin lists a bar for every rule that has started,
  finished ones included, and rich cuts what does not fit at the bottom: the newest rows, the
  running ones (80×24: after about four minutes of the demo). Here the display holds the total,
  then the failed and the running rules, and folds the finished and the waiting ones into a
  count; if the running rules alone do not fit, the last line says how many more there are.
  A rule's time is its own (since its first job started, until its last one ended), not the
  time since the run started.
* Ctrl-C is quiet. Snakemake reports each job it stops as failed, and the rich plugin printed
  each one's log (the KeyboardInterrupt tracebacks from inside torch). After Ctrl-C the display
  prints one line: the run was interrupted, which jobs were stopped, and that the same command
  goes on where it stopped.
"""

from __future__ import annotations

import time
from logging import LogRecord
from pathlib import Path

from rich.console import Console, ConsoleOptions, RenderResult
from rich.live import Live
from rich.panel import Panel
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text
from snakemake_logger_plugin_rich import LogHandler as RichLogHandler
from snakemake_logger_plugin_rich import events
from snakemake_logger_plugin_rich.event_handler import EventHandler, format_wildcards, prettyprint_rule

TOTAL = "Total Progress"
# Snakemake's message on Ctrl-C, before it stops the running jobs
INTERRUPTED = "Terminating processes on user request"
# what Snakemake prints after Ctrl-C, which the one line replaces
JOB_INTERRUPTED = "interrupted (Ctrl-C); the same command goes on where this job stopped"  # knowprobe.io's
AFTER_INTERRUPT = ("Shutting down", "Exiting because a job execution failed", "Complete log", "Error in rule")
LOG_TAIL = 15  # lines of a failed job's log shown on the console (the whole log is in logs/)
FRAME = 3  # the panel's top and bottom borders, and the line the cursor rests on
# Columns left free at the panel's right: the terminal echoes Ctrl-C as "^C" where the cursor
# rests, at the end of the bottom border; on a border as wide as the terminal that wrapped to a
# new line, and the display, erased from one line lower, left its top border on the screen
ECHO_ROOM = 3


def clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class RuleState:
    """What the display knows of one rule: its jobs and when its first started and last ended."""

    def __init__(self, total: int):
        self.total, self.completed, self.running = total, 0, 0
        self.started: float | None = None
        self.ended: float | None = None
        self.failed = False

    def elapsed(self, now: float) -> float:
        if self.started is None:
            return 0.0
        return (self.ended if self.ended is not None and self.running == 0 else now) - self.started


def display_rows(rules: dict[str, RuleState], run_started: float, now: float, height: int) -> list[tuple]:
    """The display's rows, at most ``height``: (mark, name, state, done, total, seconds) each.

    The total comes first, then the failed rules, then the running ones (longest running first);
    the finished and waiting rules are one line of counts. Where the running rules do not all fit,
    the last row says how many more are running."""
    total = rules.get(TOTAL)
    rows = []
    if total is not None:
        rows.append(
            (
                "",
                "total",
                f"{sum(r.running for n, r in rules.items() if n != TOTAL)} running",
                total.completed,
                total.total,
                now - run_started,
            )
        )
    named = {name: rule for name, rule in rules.items() if name != TOTAL}
    failed = [(n, r) for n, r in named.items() if r.failed]
    running = sorted(
        ((n, r) for n, r in named.items() if r.running > 0 and not r.failed), key=lambda item: item[1].started or now
    )
    finished = sum(r.completed >= r.total and r.running == 0 and not r.failed for r in named.values())
    waiting = sum(r.started is None for r in named.values())
    summary = ("", f"{finished} rules finished, {waiting} waiting", "", None, None, None)
    rows += [("✗", prettyprint_rule(n), "failed", r.completed, r.total, r.elapsed(now)) for n, r in failed]
    room = max(height - len(rows) - 1, 1)  # the summary line stays
    shown = running if len(running) <= room else running[: room - 1]
    rows += [("⠿", prettyprint_rule(n), f"{r.running} running", r.completed, r.total, r.elapsed(now)) for n, r in shown]
    if len(shown) < len(running):
        rows.append(("…", f"{len(running) - len(shown)} more rules running", "", None, None, None))
    rows.append(summary)
    return rows[:height]


class RunView:
    """The live display's body, drawn afresh at each refresh to fit the terminal's height."""

    def __init__(self, events: KnowprobeEvents):
        self.events = events

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        height = (options.height or console.height) - FRAME
        table = Table.grid(padding=(0, 1), expand=True)
        for column in (
            {"width": 1},
            {"ratio": 3, "no_wrap": True},
            {"no_wrap": True},
            {"ratio": 2},
            {"justify": "right", "no_wrap": True},
            {"justify": "right", "no_wrap": True},
        ):
            table.add_column(**column)
        now = time.monotonic()
        for mark, name, state, done, total, seconds in display_rows(
            self.events.states, self.events.run_started, now, height
        ):
            style = "red" if mark == "✗" else ("bold blue" if name == "total" else "")
            if done is None:
                table.add_row(mark, Text(name, style="dim"), "", "", "", "")
                continue
            bar = ProgressBar(total=max(total, 1), completed=done, complete_style="green", finished_style="dim green")
            table.add_row(
                Text(mark, style=style),
                Text(name, style=style),
                Text(state, style=style),
                bar,
                f"{done}/{total}",
                clock(seconds),
            )
        yield table


def stopped_by_ctrl_c(log: str) -> bool:
    """Whether a job's log ends with knowprobe.io's line for a job stopped by Ctrl-C."""
    path = Path(log)
    if not path.exists():
        return False
    tail = path.read_text(errors="replace").splitlines()[-3:]
    return any(JOB_INTERRUPTED in line for line in tail)


class KnowprobeEvents(EventHandler):
    """The rich plugin's event handling, with the states the display draws and a quiet Ctrl-C."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.states: dict[str, RuleState] = {}
        self.run_started = time.monotonic()
        self.interrupted = False
        self.stopped: list[str] = []

    def state(self, rule: str) -> RuleState:
        return self.states.setdefault(rule, RuleState(0))

    def handle_run_info(self, event_data: events.RunInfo, **kwargs) -> None:
        super().handle_run_info(event_data, **kwargs)
        if not self.dryrun:
            self.run_started = time.monotonic()
            self.state(TOTAL).total = event_data.total_job_count
            for rule, count in event_data.per_rule_job_counts.items():
                if count > 0:
                    self.state(rule).total = count

    def handle_job_info(self, event_data: events.JobInfo, **kwargs) -> None:
        super().handle_job_info(event_data, **kwargs)
        if self.dryrun:
            return
        now = time.monotonic()
        for rule in (event_data.rule_name, TOTAL):
            state = self.state(rule)
            state.running += 1
            state.total = max(state.total, state.completed + state.running)  # checkpoints add jobs
            state.started = now if state.started is None else state.started

    def job_ended(self, rule: str, completed: bool) -> None:
        now = time.monotonic()
        for name in (rule, TOTAL):
            state = self.state(name)
            state.running = max(state.running - 1, 0)
            state.completed += completed
            state.ended = now

    def handle_job_finished(self, event_data: events.JobFinished, **kwargs) -> None:
        super().handle_job_finished(event_data, **kwargs)
        if event_data.job_id in self.jobs_info:
            self.job_ended(self.jobs_info[event_data.job_id]["rule"], completed=True)

    def handle_job_error(self, event_data: events.JobError, **kwargs) -> None:
        info = self.jobs_info.get(event_data.jobid)
        if info is None:
            self.console.print(Text(f"✗ job {event_data.jobid} failed", style="yellow"))
            return
        self.job_ended(info["rule"], completed=False)
        wildcards = format_wildcards(info["wildcards"])
        name = info["rule"] + (f" ({wildcards})" if wildcards else "")
        # stopped by Ctrl-C, not failed: said once, at the end. A job may end of the Ctrl-C before
        # Snakemake says it was interrupted (its log's last line says so then)
        if self.interrupted or any(stopped_by_ctrl_c(log) for log in info["log"]):
            self.interrupted = True
            self.stopped.append(name)
            return
        self.state(info["rule"]).failed = True
        self.console.print(f"[bold yellow]✗ Failed[/] {name} [dim yellow](job {event_data.jobid})[/]")
        for log in info["log"]:
            path = Path(log)
            lines = path.read_text(errors="replace").splitlines() if path.exists() else []
            self.console.print(f"  [dim]last lines of {log} ({len(lines)} in all):[/]")
            self.console.print("\n".join("    " + line for line in lines[-LOG_TAIL:]), highlight=False, markup=False)

    def handle_generic_record(self, record: LogRecord, **kwargs) -> None:
        message = record.getMessage()
        if INTERRUPTED in message:
            self.interrupted = True
            return
        if self.interrupted and (message.lstrip().startswith(AFTER_INTERRUPT) or "KeyboardInterrupt" in message):
            return
        super().handle_generic_record(record, **kwargs)

    def handle_error(self, event_data: events.Error, **kwargs) -> None:
        # a job's script ends with status 130 on Ctrl-C, which Snakemake may report before it says
        # it was interrupted
        said = " ".join(str(part) for part in (event_data.message, event_data.exception, event_data.traceback) if part)
        if "returned non-zero exit status 130" in said:
            self.interrupted = True
        if self.interrupted:
            return
        super().handle_error(event_data, **kwargs)

    def close(self) -> None:
        super().close()
        if self.interrupted:
            stopped = ", ".join(self.stopped) if self.stopped else "none was running"
            self.console.print(
                f"[yellow]Interrupted (Ctrl-C).[/] Jobs stopped: {stopped}. "
                "Run the same command again: it goes on where this run stopped."
            )
            self.interrupted = False  # Snakemake calls close() more than once


class EchoRoom:
    """A renderable drawn ECHO_ROOM columns narrower than the terminal (see ECHO_ROOM)."""

    def __init__(self, renderable):
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from console.render(self.renderable, options.update_width(max(options.max_width - ECHO_ROOM, 20)))


class LogHandler(RichLogHandler):
    def __post_init__(self) -> None:
        super().__post_init__()
        self.event_handler = KnowprobeEvents(
            console=self.console,
            progress=self.progress,
            live_display=self.live_display,
            dryrun=self.settings.dryrun,
            printshellcmds=self.settings.printshellcmds,
            show_failed_logs=self.settings.show_failed_logs,
            verbose=self.settings.verbose,
        )
        self.event_handler.progress_display.live_display = self.live_display = Live(
            EchoRoom(Panel(RunView(self.event_handler), title="knowprobe", border_style="dim", padding=(0, 1, 0, 1))),
            refresh_per_second=4,
            transient=True,
            console=self.console,
        )
