"""The shared file helpers: atomic writes with the modes a plain write gives, no leftovers, digests."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from knowprobe.io import KnowprobeError, atomic_path, record_digest, verify_digest, write_text


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_atomic_writes_get_the_mode_a_plain_write_would(tmp_path, umask):
    old = os.umask(umask)
    try:
        write_text("x\n", tmp_path / "table.md")
        with open(tmp_path / "plain.md", "w") as handle:
            handle.write("x\n")
    finally:
        os.umask(old)
    mode = stat.S_IMODE((tmp_path / "table.md").stat().st_mode)
    assert mode == stat.S_IMODE((tmp_path / "plain.md").stat().st_mode) == 0o666 & ~umask


def test_leftovers_of_a_killed_write_are_removed_by_the_next(tmp_path):
    stale = tmp_path / ".table.md.abc123.part"
    stale.write_text("half")
    other = tmp_path / ".other.md.abc123.part"  # another output's: not ours to remove
    other.write_text("half")
    write_text("done\n", tmp_path / "table.md")
    assert not stale.exists() and other.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.md.abc123.part", "table.md"]


def test_a_failed_write_leaves_nothing(tmp_path):
    with pytest.raises(RuntimeError), atomic_path(tmp_path / "table.md") as tmp:
        tmp.write_text("half")
        raise RuntimeError("killed")
    assert list(tmp_path.iterdir()) == []


def test_a_digest_is_recorded_as_a_file_is_written_and_verified_as_it_is_read(tmp_path):
    """Issue 44 item 9: the shared mechanism (io.atomic_path's digest, record_digest,
    verify_digest) that the Parquet tables and the probes' hidden states use."""
    path = tmp_path / "states.bin"
    with atomic_path(path, digest=True) as tmp:
        tmp.write_bytes(bytes(range(256)) * 64)
    record = tmp_path / "states.bin.sha256"
    assert record.read_text() == f"{hashlib.sha256(path.read_bytes()).hexdigest()}  states.bin\n"
    if shutil.which("sha256sum"):  # the record is sha256sum's own format
        subprocess.run(["sha256sum", "--check", "--quiet", record.name], cwd=tmp_path, check=True)
    verify_digest(path)
    data = bytearray(path.read_bytes())
    data[5000:5064] = bytes(b ^ 0xFF for b in data[5000:5064])  # same size: only the bytes say so
    path.write_bytes(bytes(data))
    found = hashlib.sha256(bytes(data)).hexdigest()
    with pytest.raises(KnowprobeError) as error:
        verify_digest(path)
    assert str(error.value) == (
        f"{path}: changed since its rule wrote it (damaged on disk or in a copy): SHA-256 {found}, recorded "
        f"{record.read_text().split()[0]} in states.bin.sha256; delete it to have it made anew"
    )
    record_digest(path)  # recorded anew: the file as it is now is what counts
    verify_digest(path)
    record.write_text("not a digest\n")
    with pytest.raises(KnowprobeError, match="states.bin.sha256: not a SHA-256 record of states.bin"):
        verify_digest(path)
    record.unlink()
    with pytest.raises(KnowprobeError, match=r"states.bin: no digest recorded beside it \(states.bin.sha256\)"):
        verify_digest(path)
    with pytest.raises(KnowprobeError, match="nowhere.bin: file not found"):
        verify_digest(tmp_path / "nowhere.bin")
    # a failed write records nothing
    with pytest.raises(RuntimeError), atomic_path(tmp_path / "failed.bin", digest=True) as tmp:
        tmp.write_bytes(b"half")
        raise RuntimeError("killed")
    assert not (tmp_path / "failed.bin").exists() and not (tmp_path / "failed.bin.sha256").exists()


def test_progress_bars_write_a_line_per_update_to_the_log(tmp_path):
    """Issue 18: the training's progress sat in its log as one line of carriage returns."""
    from knowprobe.io import progress, rule_logging

    log_file = tmp_path / "job.log"
    with rule_logging(log_file) as log:
        with progress(range(3), desc="train", mininterval=0) as bar:
            for _ in bar:
                log.info("step")
    text = log_file.read_text()
    assert "\r" not in text
    lines = text.splitlines()
    assert sum("train:" in line for line in lines) >= 3 and "" not in lines
    assert any(line.startswith("train: 100%") for line in lines)


def test_lenient_jsonl_reads_a_bom_and_crlf_as_nothing_and_counts_invalid_utf8(tmp_path, caplog):
    from collections import Counter

    from knowprobe.io import read_jsonl_lenient

    path = tmp_path / "released.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n{"a": "caf\xe9"}\r\n\r\n{"a": 3}\r\n')
    rejects = Counter()
    with caplog.at_level("WARNING"):
        got = list(read_jsonl_lenient(path, lambda record: None, rejects))
    assert got == [(1, {"a": 1}), (4, {"a": 3})]
    assert rejects == Counter({"invalid_utf8": 1})
    assert f"{path}:2: not UTF-8" in caplog.text


@pytest.mark.parametrize(
    "error",
    [
        OSError(28, "No space left on device", "results/wikidata/parts/claims.0.parquet"),
        OSError("IOError: [Errno 28] Error writing bytes to file. Detail: [errno 28] No space left on device"),
    ],
    ids=["errno", "pyarrow-text"],
)
def test_a_full_disk_is_one_line_naming_the_file_and_the_file_system(tmp_path, capsys, error):
    """Issue 27, item 10: a full disk printed a Python traceback twice (OSError was taken for a bug)."""
    from knowprobe.io import rule_logging

    with pytest.raises(SystemExit) as exit_:
        with rule_logging(tmp_path / "logs" / "job.log"):
            raise error
    assert exit_.value.code == 1
    printed = capsys.readouterr().err.strip().splitlines()
    assert len(printed) == 1 and printed[0].startswith("knowprobe error: ")
    if error.filename:
        assert "no space left on the device (file system at /" in printed[0] and "GB free" in printed[0]
    else:  # issue 44, item 10: no file system is guessed (it said "/" where another was full)
        assert "a file the failing library did not name: no space left on the device;" in printed[0]
        assert "file system at" not in printed[0]
    assert "Traceback" not in (tmp_path / "logs" / "job.log").read_text()


def mount_point(path) -> Path:
    path = Path(path).resolve()
    while path != path.parent and os.stat(path.parent).st_dev == os.stat(path).st_dev:
        path = path.parent
    return path


def safetensors_full(tmp):
    """What safetensors raises when the disk fills as it writes (its own error type)."""
    from safetensors import SafetensorError

    raise SafetensorError("Error while serializing: I/O error: No space left on device (os error 28)")


def python_full(tmp):
    """What Python's own write raises when the disk fills: ENOSPC naming no file."""
    raise OSError(28, "No space left on device")


def pyarrow_full(tmp):
    """What pyarrow raises: an OSError with the errno only in its text."""
    raise OSError("IOError: [Errno 28] Error writing bytes to file. Detail: [errno 28] No space left on device")


@pytest.mark.parametrize(
    "write", [python_full, pyarrow_full, safetensors_full], ids=["python", "pyarrow", "safetensors"]
)
def test_a_full_disk_names_the_file_being_written_and_its_file_system(tmp_path, capsys, write):
    """Issue 44, item 10: a write whose library named no file said "a file: ... (file system at /,
    72.9 GB free)" while the target's file system was the full one; safetensors' error was taken
    for a bug (two tracebacks). Every write goes through atomic_path, which names its file."""
    from knowprobe.io import rule_logging

    dest = tmp_path / "results" / "test.hidden.safetensors"
    with pytest.raises(SystemExit) as exit_:
        with rule_logging(tmp_path / "logs" / "job.log"), atomic_path(dest) as tmp:
            write(tmp)
    assert exit_.value.code == 1
    printed = capsys.readouterr().err.strip().splitlines()
    assert printed == [printed[0]] and printed[0].startswith(
        f"knowprobe error: {dest}: no space left on the device (file system at {mount_point(tmp_path)}, "
    )
    assert "Traceback" not in (tmp_path / "logs" / "job.log").read_text()
    assert list((tmp_path / "results").iterdir()) == []  # no temporary file left


@pytest.mark.parametrize("kind", ["parquet", "text", "safetensors"])
def test_a_really_full_file_system_is_one_line_naming_it(small_file_system, tmp_path, capsys, kind):
    """The same, on a file system that fills up (pyarrow, Python and safetensors write into it)."""
    import numpy as np

    from knowprobe.io import rule_logging

    dest = small_file_system / "out" / f"table.{kind}"
    with pytest.raises(SystemExit), rule_logging(tmp_path / "job.log"), atomic_path(dest) as tmp:
        if kind == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.table({"a": np.random.default_rng(0).random(100_000)}), tmp)
        elif kind == "text":
            tmp.write_text("x" * 1_000_000)
        else:
            import torch
            from safetensors.torch import save_file

            save_file({"hidden": torch.zeros(100_000)}, str(tmp))
    printed = capsys.readouterr().err.strip().splitlines()
    assert printed == [
        f"knowprobe error: {dest}: no space left on the device (file system at {small_file_system}, 0.0 GB free); "
        "free space or point the run elsewhere, then run the same command again: it goes on where it stopped"
    ]
    assert list((small_file_system / "out").iterdir()) == []


def test_a_left_out_reason_without_an_example_shows_none():
    """One line of what a probe left out: each reason's count and description, its first example
    where it has one (a draw leaves facts out for no cause of theirs: no "(first: )")."""
    import pandas as pd

    from knowprobe.io import left_out_line

    left_out = pd.DataFrame(
        [
            {"n": 2, "description": "facts the model cannot score (too_long)", "example": "P19: 'a long one'"},
            {"n": 1200, "description": "facts beyond this model's draw (not_sampled)", "example": ""},
        ]
    )
    assert left_out_line(left_out) == (
        "2 facts the model cannot score (too_long) (first: P19: 'a long one'); "
        "1,200 facts beyond this model's draw (not_sampled)"
    )
    assert left_out_line(left_out.iloc[:0]) == "nothing left out"
