"""The test session's shared demo run (tests/conftest.py): `pytest --co` starts none, and an
interrupted session stops it from any of its processes (issue 55: after Ctrl-C of
./knowprobe.sh test, Snakemake and two training jobs went on for up to 10 minutes, on every core)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from conftest import ROOT, SharedDemo

# the process that started the run stands between (xdist's worker): it reaps what ends; the run
# gets Ctrl-C's default action, as conftest starts it (a suite started in the background ignores SIGINT)
STARTER = (
    "import signal, subprocess, sys, time; signal.signal(signal.SIGCHLD, signal.SIG_IGN); "
    "run = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], start_new_session=True, "
    "preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)); "  # as conftest's default_sigint
    "print(run.pid, flush=True); time.sleep(120)"
)


def test_listing_the_tests_starts_no_demo_run(tmp_path):
    env = {key: value for key, value in os.environ.items() if key != "KNOWPROBE_TEST_DEMO"}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--co", "-q", "-n", "0", "-p", "no:cacheprovider"]
        + ["--basetemp", str(tmp_path / "base"), "tests/test_examples.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "test_" in result.stdout  # it did collect tests that read the demo
    assert not (tmp_path / "base" / "demo").exists() and not (tmp_path / "base" / "demo.pid").exists()


def test_an_interrupted_session_stops_the_run_another_process_started(tmp_path):
    starter = subprocess.Popen([sys.executable, "-c", STARTER], stdout=subprocess.PIPE, text=True)
    try:
        pid = int(starter.stdout.readline())
        (tmp_path / "demo.pid").write_text(str(pid))
        shared = SharedDemo(root=tmp_path)
        assert shared.running()
        began = time.time()
        assert shared.stop(timeout=20)
        assert not shared.running() and time.time() - began < 15  # Ctrl-C ended it, no SIGKILL needed
        assert not shared.stop()  # nothing left to stop
    finally:
        starter.kill()
        starter.wait()
