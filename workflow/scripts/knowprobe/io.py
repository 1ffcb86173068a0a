"""Shared input/output: user-facing errors, atomic writes, JSON-lines reading, rule logging.

Every output is written to a temporary file beside its destination and renamed into
place, so a killed job never leaves a half-written file under the name a later rule reads.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

log = logging.getLogger("knowprobe")

PARQUET_ROW_GROUP = 50_000


class KnowprobeError(Exception):
    """A problem with the user's inputs or configuration, reported as one line (no traceback)."""


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path in the destination's directory; rename it to ``path`` on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_parquet(frame: pd.DataFrame | pa.Table, path: str | os.PathLike) -> None:
    table = frame if isinstance(frame, pa.Table) else pa.Table.from_pandas(frame, preserve_index=False)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd")


class ParquetPartWriter:
    """Parquet rows in row groups of PARQUET_ROW_GROUP, so memory stays bounded; renamed into place on success."""

    def __init__(self, path, schema, dictionary: tuple[str, ...] | None = None):
        """``dictionary``: the columns to dictionary-encode, where not all (columns of distinct
        values, such as sentences, fill a dictionary page and fall back to plain encoding; read
        back, such a column costs about three times as much)."""
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = self.path.with_name(f".{self.path.name}.part")
        self.schema, self.count = schema, 0
        self.rows = {name: [] for name in schema.names}
        self.writer = pq.ParquetWriter(
            self.tmp, schema, compression="zstd", use_dictionary=list(dictionary) if dictionary is not None else True
        )

    def extend(self, *columns):
        """Append rows given column by column (cheaper than row by row in this hot loop)."""
        for column, values in zip(self.rows.values(), columns):
            column.extend(values)
        if len(self.rows[self.schema.names[0]]) >= PARQUET_ROW_GROUP:
            self.flush()

    def write(self, table: pa.Table):
        """Write rows already gathered as a table (after any rows given to ``extend``)."""
        self.flush()
        if table.num_rows:
            self.writer.write_table(table)
            self.count += table.num_rows

    def flush(self):
        n = len(self.rows[self.schema.names[0]])
        if n:
            self.writer.write_table(pa.table(self.rows, schema=self.schema))
            self.count += n
            self.rows = {name: [] for name in self.schema.names}

    def close(self, ok: bool):
        if ok:
            self.flush()
        self.writer.close()
        if ok:
            os.replace(self.tmp, self.path)
        else:
            self.tmp.unlink(missing_ok=True)


def concat_parquet(parts: list[str | Path], out: str | Path, schema: pa.Schema) -> int:
    """Concatenate Parquet parts batch by batch (bounded memory)."""
    rows = 0
    with atomic_path(out) as tmp:
        with pq.ParquetWriter(tmp, schema, compression="zstd") as writer:
            for part in parts:
                for batch in pq.ParquetFile(part).iter_batches(batch_size=PARQUET_ROW_GROUP):
                    writer.write_batch(batch)
                    rows += batch.num_rows
    return rows


def read_parquet(path: str | os.PathLike) -> pd.DataFrame:
    return pq.read_table(path).to_pandas()


def write_text(text: str, path: str | os.PathLike) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_csv(frame: pd.DataFrame, path: str | os.PathLike) -> None:
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False, lineterminator="\n")


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


@contextlib.contextmanager
def rule_logging(log_path: str | os.PathLike) -> Iterator[logging.Logger]:
    """Send logging, warnings and progress bars of a rule to its log file.

    A KnowprobeError ends the job with its one-line message in the log and on the
    console; any other exception keeps its traceback (a bug, not a user mistake).
    """
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    console = sys.stderr
    with log_path.open("w", encoding="utf-8", buffering=1) as handle:
        handler = logging.StreamHandler(handle)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%H:%M:%S"))
        root = logging.getLogger()
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        logging.captureWarnings(True)
        old_stderr = sys.stderr
        sys.stderr = handle  # tqdm and library warnings write here
        try:
            yield log
        except KnowprobeError as error:
            log.error("%s", error)
            print(f"knowprobe error: {error}", file=console)
            sys.exit(1)
        except Exception:
            log.exception("unexpected failure")
            raise
        finally:
            sys.stderr = old_stderr
            root.removeHandler(handler)


def progress(iterable=None, **kwargs):
    """A tqdm bar that suits log files: updates at most every 10 s, plain ASCII."""
    from tqdm import tqdm

    kwargs.setdefault("mininterval", 10.0)
    kwargs.setdefault("ascii", True)
    kwargs.setdefault("file", sys.stderr)
    return tqdm(iterable, **kwargs)
