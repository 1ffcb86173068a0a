"""Shared input/output: user-facing errors, atomic writes, digests, JSON-lines reading, rule logging.

Every output is written to a temporary file beside its destination and renamed into
place, so a killed job never leaves a half-written file under the name a later rule reads.
A file passed between rules can also carry its SHA-256 beside it (``PATH.sha256``, in
``sha256sum``'s format), recorded as it is written and verified as it is read, so that a file
damaged in between (on disk, in a copy) stops the reader with one line naming it.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import json
import logging
import os
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd

log = logging.getLogger("knowprobe")

PARQUET_ROW_GROUP = 50_000


class KnowprobeError(Exception):
    """A problem with the user's inputs or configuration, reported as one line (no traceback)."""


def file_mode() -> int:
    """The mode a plain ``open(path, "w")`` gives a new file: 0o666 less the process's umask."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, digest: bool = False) -> Iterator[Path]:
    """Yield a temporary path in the destination's directory; rename it to ``path`` on success.

    Temporary files that a killed job left beside ``path`` are removed first, and the file gets
    the mode a normal write would give it (``mkstemp`` creates it readable by its owner only, so
    a group sharing the results could not read them). With ``digest``, the file's SHA-256 is
    recorded beside it (``record_digest``) once it is in place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in path.parent.glob(f".{glob.escape(path.name)}.*.part"):
        stale.unlink(missing_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp)
    try:
        with writing(path, tmp):
            yield tmp
            if tmp.exists():
                os.chmod(tmp, file_mode())
            found = file_sha256(tmp) if digest else None
            os.replace(tmp, path)
        if found is not None:
            record_digest(path, found)
    finally:
        if tmp.exists():
            tmp.unlink()


@contextlib.contextmanager
def writing(path: str | os.PathLike, *also: str | os.PathLike) -> Iterator[None]:
    """A full disk while ``path`` is written (by any library) as an OSError naming ``path``: the
    libraries name no file (Python's write, pyarrow, safetensors, zipfile) or the temporary one
    (``also``), so that rule_logging's one line names the file being written and its file system."""
    try:
        yield
    except Exception as error:
        named = getattr(error, "filename", None)
        if is_disk_full(error) and (named is None or str(named) in {str(name) for name in also}):
            raise disk_full_error(error, path) from error
        raise


DIGEST_SUFFIX = ".sha256"
# the digests this process verified: (path, size, modification time) -> SHA-256, so that a file
# read several times by one job is hashed once
_verified: dict[tuple[str, int, int], str] = {}


def digest_path(path: str | os.PathLike) -> Path:
    """Where a file's recorded SHA-256 lies: ``PATH.sha256`` beside it."""
    return Path(f"{path}{DIGEST_SUFFIX}")


def file_sha256(path: str | os.PathLike) -> str:
    """The SHA-256 of a file's bytes (hex), read in blocks of 4 MiB."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def record_digest(path: str | os.PathLike, sha256: str | None = None) -> None:
    """Record a file's SHA-256 beside it (``PATH.sha256``, one line ``HEX  NAME`` as ``sha256sum``
    writes it, so ``sha256sum -c`` checks it too), written atomically."""
    path = Path(path)
    sha256 = sha256 or file_sha256(path)
    with atomic_path(digest_path(path)) as tmp:
        tmp.write_text(f"{sha256}  {path.name}\n", encoding="utf-8")


def verify_digest(path: str | os.PathLike) -> None:
    """Check a file against the SHA-256 recorded beside it as it was written: a file without a
    record, or whose bytes changed since (damaged on disk or in a copy, truncated), is one
    KnowprobeError naming it."""
    path = Path(path)
    record = digest_path(path)
    try:
        stat = path.stat()
        text = record.read_text(encoding="utf-8")
    except FileNotFoundError as error:
        missing = "file not found" if error.filename == str(path) else f"no digest recorded beside it ({record.name})"
        raise KnowprobeError(f"{path}: {missing}; delete it to have it made anew") from None
    except (OSError, UnicodeDecodeError) as error:
        raise KnowprobeError(f"{record}: cannot read the recorded digest ({error})") from None
    fields = text.split()
    recorded = fields[0].lower() if fields else ""
    if len(recorded) != 64 or any(c not in "0123456789abcdef" for c in recorded):
        raise KnowprobeError(f"{record}: not a SHA-256 record of {path.name}; delete both to have them made anew")
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if _verified.get(key) == recorded:
        return
    found = file_sha256(path)
    if found != recorded:
        raise KnowprobeError(
            f"{path}: changed since its rule wrote it (damaged on disk or in a copy): SHA-256 {found}, "
            f"recorded {recorded} in {record.name}; delete it to have it made anew"
        )
    _verified[key] = recorded


def write_text(text: str, path: str | os.PathLike) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_csv(frame: pd.DataFrame, path: str | os.PathLike) -> None:
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False, lineterminator="\n")


def read_lines(path: str | os.PathLike) -> list[str]:
    """The non-empty lines of a UTF-8 text file."""
    return [line for line in Path(path).read_text(encoding="utf-8").split("\n") if line.strip()]


def read_jsonl(path: str | os.PathLike, required: tuple[str, ...] = ()) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, record)``; a bad line raises KnowprobeError naming file and line."""
    path = Path(path)
    if not path.is_file():
        raise KnowprobeError(f"{path}: file not found")
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise KnowprobeError(f"{path}:{number}: not valid JSON ({error.msg}, column {error.colno})") from None
            if not isinstance(record, dict):
                raise KnowprobeError(f"{path}:{number}: expected a JSON object, got {type(record).__name__}")
            missing = [key for key in required if key not in record]
            if missing:
                raise KnowprobeError(f"{path}:{number}: missing key {missing[0]!r}")
            yield number, record


QUOTED = 80  # the most characters of an input a message quotes


def quoted(text: str, limit: int = QUOTED) -> str:
    """An input (or a record) as a message quotes it: its repr, cut after ``limit`` characters with its length
    said (``'a robin ...'… (1,912 characters)``), so that one long input never floods a log."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text):,} characters)"


def left_out_line(left_out) -> str:
    """What a probe left out for a model (a table with ``n``, ``description`` and ``example``: what
    the model could not take, by reason), as one line for the job's log and the tables' notes; a
    reason without an example (a draw leaves facts out, not one of them for a cause) shows none."""
    if not len(left_out):
        return "nothing left out"
    return "; ".join(
        f"{row.n:,} {row.description}" + (f" (first: {row.example})" if row.example else "")
        for row in left_out.itertuples()
    )


INVALID_UTF8 = "invalid_utf8"  # the reason of a line that is not UTF-8, in every lenient reader

# The longest text (a subject, an object, an answer, a template) the importers take, in characters;
# a longer one is refused as too long and counted. Probes read names and sentences: 100,000
# characters are tens of thousands of tokens, beyond what a statement probe scores, and one such
# text filled into every statement of its relation was tokenized for minutes past 3.4 GB (a 5 MB
# answer). Texts under it that a model still cannot take are left out per model by the probes.
MAX_TEXT_CHARACTERS = 100_000


def too_long_text(value) -> bool:
    """Whether ``value`` is a text longer than the importers take (``MAX_TEXT_CHARACTERS``)."""
    return isinstance(value, str) and len(value) > MAX_TEXT_CHARACTERS


# what a file begins with where it is compressed (or an archive), not text
COMPRESSED = {
    b"\x1f\x8b": "gzip",
    b"BZh": "bzip2",
    b"\xfd7zXZ\x00": "xz",
    b"PK\x03\x04": "zip",
    b"\x28\xb5\x2f\xfd": "zstd",
}


def compression_of(head: bytes) -> str | None:
    """The compression a file's first bytes show (gzip, bzip2, xz, zip, zstd), or None."""
    for magic, name in COMPRESSED.items():
        if head.startswith(magic) and (name != "bzip2" or head[3:4].isdigit() and head[4:10] == b"1AY&SY"):
            return name
    return None


def text_lines(path: str | os.PathLike) -> Iterator[tuple[int, str | None]]:
    """``(line_number, text)`` of each line of a UTF-8 file, without its line end (LF or CRLF);
    a byte-order mark at the start is read as nothing; a line that is not UTF-8 comes as None
    (never with U+FFFD put in for its bytes). A file that cannot be opened, or a compressed one
    under a text file's name (a gzip archive called ``.jsonl``), is one KnowprobeError naming it,
    not a count of lines that are not UTF-8."""
    path = Path(path)
    try:
        handle = path.open("rb")
    except OSError as error:
        raise KnowprobeError(f"{path}: cannot be read ({error.strerror or error})") from None
    with handle:
        compressed = compression_of(handle.read(10))
        if compressed:
            raise KnowprobeError(f"{path}: {compressed}-compressed data under a text file's name; unpack it first")
        handle.seek(0)
        for number, raw in enumerate(handle, start=1):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                yield number, raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError:
                yield number, None


def lenient(
    path: str | os.PathLike,
    parse: Callable[[str], tuple[object, tuple[str, str] | None]],
    rejects: Counter,
    left_out: list | None = None,
) -> Iterator[tuple[int, object]]:
    """The shared reading of released files whose bad lines are reported, not fatal: yield
    ``(line_number, value)`` for each non-empty line that ``parse`` takes (it gives ``(value,
    None)``, or ``(None, (reason, message))`` for a line to leave out). Lines left out are counted
    in ``rejects`` by reason (``invalid_utf8`` for a line that is not UTF-8), logged as
    ``file:line: message`` and, where ``left_out`` is given, listed there as ``(line, reason,
    text)`` (the text None where it is not UTF-8), never raised. A byte-order mark and CRLF line
    ends are read as nothing."""
    for number, line in text_lines(path):
        if line is None:
            value, found = None, (INVALID_UTF8, "not UTF-8")
        elif not line.strip():
            continue
        else:
            value, found = parse(line)
        if found is not None:
            reason, message = found
            rejects[reason] += 1
            log.warning("%s:%d: %s; left out", path, number, message)
            if left_out is not None:
                left_out.append((number, reason, line))
            continue
        yield number, value


def read_text_lenient(
    path: str | os.PathLike,
    problem: Callable[[str], tuple[str, str] | None],
    rejects: Counter,
    left_out: list | None = None,
) -> Iterator[tuple[int, str]]:
    """``lenient`` for plain text: each non-empty line, stripped, that ``problem`` passes."""

    def parse(line):
        text = line.strip()
        return text, problem(text)

    return lenient(path, parse, rejects, left_out)


def read_jsonl_lenient(
    path: str | os.PathLike,
    problem: Callable[[dict], tuple[str, str] | None],
    rejects: Counter,
    left_out: list | None = None,
) -> Iterator[tuple[int, dict]]:
    """``lenient`` for JSON lines: yield ``(line_number, record)`` for each line that is a JSON
    object passing ``problem`` (which gives ``(reason, message)`` for a record to leave out, else
    None); ``invalid_json`` counts a line that is not a JSON object. For data whose bad lines
    are reported, not fatal (a study's released files)."""

    def parse(line):
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            record = None
        if not isinstance(record, dict):
            return None, ("invalid_json", "not a JSON object")
        return record, problem(record)

    return lenient(path, parse, rejects, left_out)


class LineLog:
    """A log file as progress bars write to it: each carriage return (the bar drawn again) starts
    a new line instead, so that a log holds one line per update, not one line of returns."""

    def __init__(self, handle):
        self.handle, self.at_line_start = handle, True

    def write(self, text: str) -> int:
        text = text.replace("\r", "\n")
        while "\n\n" in text:
            text = text.replace("\n\n", "\n")
        if self.at_line_start:
            text = text.lstrip("\n")
        if text:
            self.handle.write(text)
            self.at_line_start = text.endswith("\n")
        return len(text)

    def flush(self) -> None:
        self.handle.flush()

    def __getattr__(self, name):
        return getattr(self.handle, name)

    def records(self):
        """A stream for the logging handler: each record starts on a line of its own, also after
        a progress bar's line, which ends without a newline until the bar is drawn again."""
        log = self

        class Records:
            def write(self, text: str) -> int:
                if not log.at_line_start:
                    log.write("\n")
                return log.write(text)

            def flush(self) -> None:
                log.flush()

        return Records()


@contextlib.contextmanager
def rule_logging(log_path: str | os.PathLike) -> Iterator[logging.Logger]:
    """Send logging, warnings and progress bars of a rule to its log file.

    A KnowprobeError ends the job with its one-line message in the log and on the
    console; any other exception keeps its traceback (a bug, not a user mistake).
    """
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    console = sys.stderr
    at_start = MemoryMark()
    with log_path.open("w", encoding="utf-8", buffering=1) as handle:
        lines = LineLog(handle)
        handler = logging.StreamHandler(lines.records())
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%H:%M:%S"))
        root = logging.getLogger()
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        logging.captureWarnings(True)
        old_stderr = sys.stderr
        sys.stderr = lines  # tqdm and library warnings write here, a line per update
        try:
            yield log
        except KnowprobeError as error:
            log.error("%s", error)
            print(f"knowprobe error: {error}", file=console)
            sys.exit(1)
        except Exception as error:
            if not is_disk_full(error):
                log.exception("unexpected failure")
                raise
            message = disk_full_message(error)
            with contextlib.suppress(OSError):  # the log is on a full disk too, perhaps
                log.error("%s", message)
            print(f"knowprobe error: {message}", file=console)
            sys.exit(1)
        except SystemExit as stop:
            if stop.code == 130:  # Ctrl-C (knowprobe._interrupted)
                log.warning("interrupted (Ctrl-C); the same command goes on where this job stopped")
            raise
        finally:
            sys.stderr = old_stderr
            with contextlib.suppress(Exception):  # never a reason for a job to fail
                log.info("%s", job_resources(at_start))
            root.removeHandler(handler)


def job_resources(at_start: MemoryMark | None = None) -> str:
    """What this job's process has used so far, as ``/usr/bin/time -v`` counts it (getrusage):
    wall time since the process started, CPU time (user + system), peak resident memory; given
    ``at_start``, also what the rule's own work added to the memory it started with (Snakemake's
    script preamble and the imports hold that, the same whatever the inputs); and the same for
    child processes where there were any. Every rule's log ends with this line (``resources: wall
    12.3 s, CPU 20.1 s, peak RSS 812 MB (+437 MB over 375 MB at the start)``): what a cluster's
    memory and time limits are set from (benchmarks/rehearsal.py reads it)."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    peak = _megabytes(own.ru_maxrss)
    added = None
    if at_start is not None:
        since = at_start.peak_since()
        peak = max(peak, at_start.peak_before, since)
        added = max(0.0, since - at_start.rss)
    line = f"resources: wall {process_seconds():.1f} s, CPU {own.ru_utime + own.ru_stime:.1f} s, peak RSS {peak:.0f} MB"
    if added is not None:
        line += f" (+{added:.0f} MB over {at_start.rss:.0f} MB at the start)"
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    if children.ru_utime + children.ru_stime > 0:
        line += (
            f"; child processes: CPU {children.ru_utime + children.ru_stime:.1f} s, "
            f"largest peak RSS {_megabytes(children.ru_maxrss):.0f} MB"
        )
    return line


_IMPORTED_AT = __import__("time").monotonic()


def process_seconds() -> float:
    """Seconds since this process started (Linux: from /proc; elsewhere since knowprobe was
    imported, which misses the interpreter's own start)."""
    import time

    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # clock ticks after boot
        return float(Path("/proc/uptime").read_text().split()[0]) - started
    except (OSError, ValueError, IndexError):
        return time.monotonic() - _IMPORTED_AT


class MemoryMark:
    """The memory a rule starts with, so that what its own work adds can be told: the resident
    set now, and (Linux) the peak from now on, by resetting the process's high-water mark (which
    the preamble and imports set, often above what the rule then needs: memory they freed is
    reused, and a peak measured from the process's start would not show the rule's work)."""

    def __init__(self):
        import resource

        self.peak_before = _megabytes(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        self.rss = _status_mb("VmRSS") or self.peak_before
        try:
            Path("/proc/self/clear_refs").write_text("5")  # the peak (VmHWM) from here on
            self.reset = True
        except OSError:
            self.reset = False

    def peak_since(self) -> float:
        """The peak resident set since the mark (where it cannot be reset: since the start)."""
        import resource

        return (_status_mb("VmHWM") if self.reset else None) or _megabytes(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        )


def _status_mb(field: str) -> float | None:
    """A memory field of /proc/self/status in MB (None where there is no /proc)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _megabytes(maxrss: int) -> float:
    """getrusage's ru_maxrss in MB of 2**20 bytes, as SLURM's --mem and Snakemake's mem_mb count
    them (ru_maxrss is in kilobytes on Linux, in bytes on macOS)."""
    return maxrss / 2**20 if sys.platform == "darwin" else maxrss / 1024


DISK_FULL = {errno.ENOSPC, errno.EDQUOT}


DISK_FULL_TEXTS = (
    "No space left on device",  # ENOSPC, as Python, pyarrow and safetensors ("os error 28") word it
    "Disk quota exceeded",  # EDQUOT
)


def is_disk_full(error: BaseException) -> bool:
    """A write that found no space: an OSError with its errno, or any library's error whose text
    says so (pyarrow's OSError carries the errno only in its text; safetensors raises its own
    error type with the operating system's text in it)."""
    if not isinstance(error, Exception):
        return False
    if isinstance(error, OSError) and error.errno in DISK_FULL:
        return True
    text = str(error)
    return any(phrase in text for phrase in DISK_FULL_TEXTS)


def disk_full_error(error: BaseException, path: str | os.PathLike) -> OSError:
    """``error`` (a full disk) as an OSError naming ``path``, the file being written."""
    quota = getattr(error, "errno", None) == errno.EDQUOT or "Disk quota exceeded" in str(error)
    code = errno.EDQUOT if quota else errno.ENOSPC
    return OSError(code, os.strerror(code), str(path))


def disk_full_message(error: BaseException) -> str:
    """One line for a write that found the disk (or the quota) full: the file, the file system it
    is on and what is free there. Writes go through ``atomic_path`` and the Parquet part writers,
    which name the file they write where the library's error does not; a file still unnamed is
    said to be so, and no file system is guessed for it."""
    filename = getattr(error, "filename", None)
    quota = getattr(error, "errno", None) == errno.EDQUOT or "Disk quota exceeded" in str(error)
    what = "the quota is used up" if quota else "no space left on the device"
    advice = "free space or point the run elsewhere, then run the same command again: it goes on where it stopped"
    if not filename:
        return f"a file the failing library did not name: {what}; {advice}"
    place = Path(filename).resolve().parent
    while not place.exists() and place != place.parent:
        place = place.parent
    mount = place
    while mount != mount.parent and os.stat(mount.parent).st_dev == os.stat(mount).st_dev:
        mount = mount.parent
    free = shutil.disk_usage(place).free
    return f"{filename}: {what} (file system at {mount}, {free / 1e9:.1f} GB free); {advice}"


def progress(iterable=None, **kwargs):
    """A tqdm bar that suits log files: updates at most every 10 s, plain ASCII."""
    from tqdm import tqdm

    kwargs.setdefault("mininterval", 10.0)
    kwargs.setdefault("ascii", True)
    kwargs.setdefault("file", sys.stderr)
    return tqdm(iterable, **kwargs)
