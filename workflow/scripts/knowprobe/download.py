"""Resumable, verified downloads of public dumps and benchmarks, and unpacking of archives.

A download goes to ``<dest>.part``; an interrupted one resumes from the bytes already
there with an HTTP Range request, and only a complete file is renamed to ``dest``.

Every download is verified: the Wikimedia dumps against the checksum lists published beside them,
every other file against a SHA-256 known in advance (``downloads.sha256`` in the config, whose
defaults hold the digests that can be known: a file inside a public repository at a pinned commit)
or else against the lock file (``downloads.lock``), which records each download's SHA-256 and
size, and each hub model's resolved commit and files, the first time it is made; later runs, and
other clones and cluster nodes given the same lock file, are held to it. A mismatch deletes the
file and is one line naming it, the expected and the found digest.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import tarfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from .io import KnowprobeError, atomic_path, is_disk_full, progress, text_lines, write_text, writing

log = logging.getLogger(__name__)

CHUNK = 1 << 20


def is_url(location: str) -> bool:
    return location.startswith(("http://", "https://", "ftp://"))


def download(url: str, dest: str | os.PathLike, timeout: float = 60.0) -> Path:
    """Fetch ``url`` to ``dest``, resuming a partial ``dest.part`` left by an earlier attempt."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    have = part.stat().st_size if part.exists() else 0
    request = urllib.request.Request(url, headers={"User-Agent": "knowprobe"})
    if have:
        request.add_header("Range", f"bytes={have}-")
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as error:
        if error.code == 416 and have:  # the partial file is already complete
            os.replace(part, dest)
            return dest
        raise KnowprobeError(f"download of {url} failed: HTTP {error.code} {error.reason}") from None
    except (urllib.error.URLError, OSError) as error:
        raise KnowprobeError(f"download of {url} failed: {error}") from None
    with response:
        resumed = have and response.status == 206
        if have and not resumed:
            log.info("server ignored the Range request; restarting %s from byte 0", url)
            have = 0
        length = response.headers.get("Content-Length")
        total = have + int(length) if length is not None else None
        log.info(
            "downloading %s -> %s (%s bytes%s)",
            url,
            dest,
            total or "unknown",
            f", resuming at {have}" if resumed else "",
        )
        with (
            writing(dest, part),  # a full disk names the download, whose .part the next run resumes
            part.open("ab" if resumed else "wb") as out,
            progress(total=total, initial=have, unit="B", unit_scale=True, desc=dest.name) as bar,
        ):
            while chunk := response.read(CHUNK):
                out.write(chunk)
                bar.update(len(chunk))
    size = part.stat().st_size
    if total is not None and size != total:
        raise KnowprobeError(f"download of {url} stopped at {size} of {total} bytes; run again to resume")
    os.replace(part, dest)
    return dest


def remote_size(url: str, timeout: float = 15.0) -> int | None:
    """The size a server announces for ``url`` (a HEAD request), or None if it says nothing or
    cannot be reached (the download itself will report that)."""
    request = urllib.request.Request(url, method="HEAD", headers={"User-Agent": "knowprobe"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            length = response.headers.get("Content-Length")
    except (urllib.error.URLError, OSError, ValueError):
        return None
    return int(length) if length and length.isdigit() else None


def unreachable(downloads: dict[str, str], timeout: float = 10.0) -> str | None:
    """Whether the URL downloads a run will make (``downloads``: URL -> the config keys that give
    a local copy instead) can be had, checked once before any job: one request to the first URL's
    server (no retries), as the hub models are checked. One line naming the downloads and the
    config keys for local copies, or None (a server that answers, even with an error, is the
    download's own business)."""
    if not downloads:
        return None
    url = next(iter(downloads))
    request = urllib.request.Request(url, method="HEAD", headers={"User-Agent": "knowprobe"})
    try:
        with urllib.request.urlopen(request, timeout=timeout):
            return None
    except urllib.error.HTTPError:
        return None
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        host = urllib.parse.urlsplit(url).netloc
        shown = ", ".join(sorted(downloads)[:3]) + (f" and {len(downloads) - 3} more" if len(downloads) > 3 else "")
        keys = ", ".join(dict.fromkeys(downloads.values()))
        return (
            f"{host} cannot be reached ({type(reason).__name__}: {str(reason).splitlines()[0] if str(reason) else ''})"
            f", and this run downloads {len(downloads)} file{'s' if len(downloads) > 1 else ''} ({shown}): "
            f"give local copies instead ({keys})"
        )


def space_needed(planned: list[tuple[str, int | None, str]], free: int, where: str) -> str | None:
    """One line saying that the downloads ``(what, bytes or None, dest)`` exceed ``free`` bytes,
    or None if they fit (downloads of unknown size count as 0)."""
    total = sum(size or 0 for _, size, _ in planned)
    if total <= free:
        return None
    largest = sorted(((size or 0, what) for what, size, _ in planned), reverse=True)[:3]
    named = ", ".join(f"{what} {size / 1e9:.1f} GB" for size, what in largest)
    return (
        f"{where}: {free / 1e9:.1f} GB free, and this run downloads {total / 1e9:.1f} GB ({named}"
        f"{', ...' if len(planned) > 3 else ''}): free space, or give local copies (a path in the config)"
    )


def file_digest(path: str | os.PathLike, algorithm: str) -> str:
    digest = hashlib.new(algorithm)
    with (
        open(path, "rb") as handle,
        progress(total=os.path.getsize(path), unit="B", unit_scale=True, desc=f"{algorithm} {Path(path).name}") as bar,
    ):
        while chunk := handle.read(CHUNK * 16):
            digest.update(chunk)
            bar.update(len(chunk))
    return digest.hexdigest()


def check_digest(path: str | os.PathLike, algorithm: str, expected: str, source: str, found: str | None = None) -> str:
    """``path``'s digest (``found`` where already computed) against ``expected`` from ``source``;
    a mismatch deletes the file, so that the next run downloads it again, and is one line naming
    the file, the expected and the found digest. Returns the digest."""
    path = Path(path)
    found = found or file_digest(path, algorithm)
    if found != expected.lower():
        path.unlink(missing_ok=True)
        raise KnowprobeError(
            f"{path}: {algorithm} {found} does not match {expected.lower()} from {source}; "
            f"the file was deleted, run again to download it anew"
        )
    log.info("%s: %s checksum verified against %s", path.name, algorithm, source)
    return found


def read_manifest(path: str | os.PathLike) -> dict[str, str]:
    """A ``sha256sum`` listing (``<hash>  <file>`` lines, each file relative to the folder the
    listing checks; ``*`` before a name, blank lines and ``#`` comments allowed) as
    ``{file: hash}``; a line of another shape is one error naming the listing and the line."""
    listed = {}
    for number, line in text_lines(path):
        if line is None:
            raise KnowprobeError(f"{path}:{number}: not UTF-8")
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split(maxsplit=1)
        if len(parts) != 2 or len(parts[0]) != 64 or not all(c in "0123456789abcdef" for c in parts[0].lower()):
            raise KnowprobeError(f"{path}:{number}: not a '<sha256>  <file>' line")
        listed[parts[1].strip().lstrip("*")] = parts[0].lower()
    if not listed:
        raise KnowprobeError(f"{path}: no '<sha256>  <file>' line")
    return listed


def verify_manifest(root: str | os.PathLike, manifest: str | os.PathLike, unlisted: str | None = None) -> int:
    """Check every file ``manifest`` (a ``sha256sum`` listing) names under ``root`` against its
    SHA-256, and with ``unlisted`` (a glob under ``root``) that no file it matches is missing from
    the listing: a pinned download unpacked as it was published. A missing, changed or unlisted
    file is one error naming it (the download is then not the pinned one). Returns the files checked."""
    root = Path(root)
    listed = read_manifest(manifest)
    for name, digest in sorted(listed.items()):
        path = root / name
        if not path.is_file():
            raise KnowprobeError(f"{root}: {name} missing (the listing {manifest} names it)")
        found = file_digest(path, "sha256")
        if found != digest:
            raise KnowprobeError(
                f"{path}: sha256 {found} does not match {digest} from {manifest}; delete the download to fetch it anew"
            )
    found_names = (str(path.relative_to(root)) for path in root.glob(unlisted)) if unlisted else ()
    extra = sorted(name for name in found_names if name not in listed)
    if extra:
        raise KnowprobeError(f"{root}: {', '.join(extra)} not in the listing {manifest}")
    log.info("%s: %d files match %s", root, len(listed), manifest)
    return len(listed)


def fetch_text(url: str, timeout: float = 60.0) -> str:
    try:
        with urllib.request.urlopen(
            urllib.request.Request(url, headers={"User-Agent": "knowprobe"}), timeout=timeout
        ) as response:
            return response.read().decode("utf-8")
    except (urllib.error.URLError, OSError) as error:
        raise KnowprobeError(f"download of {url} failed: {error}") from None


def verify_checksum(path: str | os.PathLike, checksums: str, algorithm: str, source: str) -> str:
    """Check ``path`` against a Wikimedia checksum list (``<hash>  <file name>`` lines).

    A mismatch deletes the file, so that the next run downloads it again. Returns the digest.
    """
    path = Path(path)
    expected = {}
    for line in checksums.splitlines():
        parts = line.split()
        if len(parts) == 2:
            expected[parts[1]] = parts[0].lower()
    if path.name not in expected:
        raise KnowprobeError(f"{source}: no {algorithm} checksum for {path.name}")
    return check_digest(path, algorithm, expected[path.name], source)


LOCK_VERSION = 1


@dataclass
class Checks:
    """How downloads are verified (the config's ``downloads`` section): ``lock`` the lock file,
    ``checksum`` sha256 or none, ``known`` URL -> SHA-256 known in advance."""

    lock: Path | None = None
    checksum: str = "sha256"
    known: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_config(cls, config: dict) -> Checks:
        """From a validated config: the schema's known digests, with the config's own added over them."""
        from .config import schema_defaults

        section = config.get("downloads") or {}
        known = {**schema_defaults("downloads").get("sha256", {}), **(section.get("sha256") or {})}
        lock = section.get("lock", schema_defaults("downloads")["lock"])
        return cls(lock=Path(lock) if lock else None, checksum=section.get("checksum", "sha256"), known=known)


def read_lock(path: str | os.PathLike | None) -> dict:
    """The lock file's records (``files``: URL -> record, ``models``: hub_id@revision -> record)."""
    empty = {"version": LOCK_VERSION, "files": {}, "models": {}}
    if path is None or not Path(path).is_file():
        return empty
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise KnowprobeError(
            f"{path}: not a knowprobe lock file ({error}); restore it, or delete it to record anew"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("files", {}), dict):
        raise KnowprobeError(f"{path}: not a knowprobe lock file (no files mapping)")
    problem = lock_problem(data)
    if problem:
        raise KnowprobeError(f"{path}: {problem}; restore it, or delete that entry to record it anew")
    return {**empty, **data}


_TEXT_FIELDS = ("sha256", "md5", "sha1", "commit", "file", "directory", "recorded", "verified_against")


def lock_problem(data: dict) -> str | None:
    """What is wrong with the shape of a lock file's records (each section a mapping of records,
    each record a mapping whose digests and commit are texts and sizes whole numbers), naming the
    entry; None where nothing is."""

    def record_problem(where: str, record) -> str | None:
        if not isinstance(record, dict):
            return f"{where} is a {type(record).__name__} ({str(record)[:40]!r}), not a mapping"
        for name in _TEXT_FIELDS:
            if name in record and not isinstance(record[name], str):
                return f"{where}: {name} is {record[name]!r}, not a text"
        if "bytes" in record and (not isinstance(record["bytes"], int) or isinstance(record["bytes"], bool)):
            return f"{where}: bytes is {record['bytes']!r}, not a whole number"
        return None

    for section, keyed_by in (("files", "URL"), ("models", "hub_id@revision")):
        records = data.get(section, {})
        if not isinstance(records, dict):
            return f"its {section} section is a {type(records).__name__}, not a mapping of {keyed_by} to its record"
        for key, record in records.items():
            where = f"{section} entry {key!r}"
            problem = record_problem(where, record)
            if problem:
                return problem
            files = record.get("files", {}) if section == "models" else {}
            if not isinstance(files, dict):
                return f"{where}: files is a {type(files).__name__}, not a mapping of file name to its record"
            for name, entry in files.items():
                problem = record_problem(f"{where}, file {name!r}", entry)
                if problem:
                    return problem
    return None


@contextlib.contextmanager
def editing_lock(path: str | os.PathLike):
    """The lock file's records to read and change, written back (atomically) on leaving; download
    jobs that run side by side take turns (an flock on a file beside it)."""
    import fcntl

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f".{path.name}.flock"), "a") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        data = read_lock(path)
        before = json.dumps(data, sort_keys=True)
        yield data
        if json.dumps(data, sort_keys=True) != before:
            write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", path)


def now() -> str:
    import datetime

    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def record_file(checks: Checks, url: str, path: str | os.PathLike, digests: dict[str, str], against: str) -> None:
    """Record a verified download in the lock file: its digests, size and what it was verified against."""
    if checks.lock is None:
        return
    path = Path(path)
    with editing_lock(checks.lock) as data:
        old = data["files"].get(url, {})
        same = old.get("recorded") and all(old.get(name) == digest for name, digest in digests.items())
        data["files"][url] = {
            "file": str(path),
            "bytes": path.stat().st_size,
            **digests,
            "recorded": old["recorded"] if same else now(),
            "verified_against": against,
        }


def verify_download(url: str, path: str | os.PathLike, checks: Checks) -> str:
    """Verify a downloaded file against its known SHA-256, else its record in the lock file (made
    now where there is none); returns what it was verified against, for the log and the report."""
    path = Path(path)
    record = read_lock(checks.lock)["files"].get(url)
    if checks.checksum == "none":
        log.warning("downloads.checksum is none: %s (%s) is not verified", path, url)
        against = "not verified (downloads.checksum: none)"
        if record is None:  # its size, for the report; a digest recorded earlier is kept as it is
            record_file(checks, url, path, {}, against)
        return against
    found = file_digest(path, "sha256")
    if url in checks.known:
        against = "its SHA-256 in the config (downloads.sha256)"
        check_digest(path, "sha256", checks.known[url], against, found)
    elif record and record.get("sha256"):
        against = f"the lock file {checks.lock} (recorded {record.get('recorded', '?')})"
        try:
            check_digest(path, "sha256", record["sha256"], against, found)
        except KnowprobeError as error:
            raise KnowprobeError(
                f"{error} (or, if its publisher changed the file on purpose, remove its entry from {checks.lock})"
            ) from None
    else:
        against = f"nothing yet: recorded in {checks.lock} on this first download"
        log.info("%s: SHA-256 %s, %d bytes, recorded in %s", path.name, found, path.stat().st_size, checks.lock)
    record_file(checks, url, path, {"sha256": found}, against)
    return against


def lock_report(lock: str | os.PathLike) -> str:
    """The lock file's records as reStructuredText for the report's first page: each download and
    hub model, its digest or commit, and what it was verified against ("" without a lock file)."""
    data = read_lock(lock)
    if not data["files"] and not data["models"]:
        return ""
    lines = [f"**Downloads**, and what each was verified against (the lock file ``{lock}``):", ""]
    for url, record in sorted(data["files"].items(), key=lambda item: item[1].get("file", "")):
        digests = ", ".join(f"{name} ``{record[name]}``" for name in ("sha256", "md5", "sha1") if record.get(name))
        lines.append(
            f"- ``{record.get('file', '?')}`` from {url}: {record.get('bytes', 0):,} bytes, {digests or 'no digest'}; "
            f"verified against {record.get('verified_against', '?')}"
        )
    for key, record in sorted(data["models"].items()):
        lines.append(
            f"- hub model ``{key}`` in ``{record.get('directory', '?')}``: commit ``{record.get('commit', '?')}``, "
            f"{len(record.get('files', {}))} files (each with its SHA-256 in the lock file); verified against "
            f"{record.get('verified_against', '?')}"
        )
    return "\n".join(lines) + "\n"


def fetch(location: str, dest: str | os.PathLike, checks: Checks | None = None) -> Path:
    """Download a URL (verified by ``checks``), or copy a local file, to ``dest``."""
    if is_url(location):
        download(location, dest)
        if checks is not None:
            verify_download(location, dest, checks)
        return Path(dest)
    source = Path(location)
    if not source.is_file():
        raise KnowprobeError(f"{source}: file not found")
    with atomic_path(dest) as tmp:
        shutil.copyfile(source, tmp)
    return Path(dest)


def unpack(archive: str | os.PathLike, dest: str | os.PathLike, marker: str, expected: str) -> Path:
    """Unpack a .zip or tar archive and move the folder that holds ``marker`` (a glob, relative to
    that folder) to ``dest``.

    Releases nest their data at different depths (LAMA's zip under ``data/``), so the folder is
    found by what it holds, not by its name.
    """
    archive, dest = Path(archive), Path(dest)
    staging = dest.with_name(dest.name + ".unpacking")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        with writing(dest):  # a full disk names the folder being unpacked
            if archive.suffix == ".zip":
                with zipfile.ZipFile(archive) as zipped:
                    zipped.extractall(staging)
            else:
                with tarfile.open(archive) as tar:
                    # the "data" filter (no links out of the folder, no device files) exists from
                    # Python 3.10.12 / 3.11.4 on; older ones unpack the verified archive as it is
                    safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
                    tar.extractall(staging, **safe)
    except OSError as error:
        if is_disk_full(error):
            shutil.rmtree(staging, ignore_errors=True)  # what was unpacked, out of the full disk's way
        raise
    except zipfile.BadZipFile:
        raise KnowprobeError(f"{archive}: not a zip archive (delete it to download it again)") from None
    except tarfile.TarError as error:
        raise KnowprobeError(f"{archive}: not a readable tar archive ({error})") from None
    depth = marker.count("/") + 1
    roots = sorted({path.parents[depth - 1] for path in staging.rglob(marker)})
    if not roots:
        shutil.rmtree(staging, ignore_errors=True)
        raise KnowprobeError(f"{archive}: no {marker} inside; is this {expected}?")
    shutil.rmtree(dest, ignore_errors=True)
    os.replace(roots[0], dest)
    shutil.rmtree(staging, ignore_errors=True)
    return dest


def unpack_lama(archive: str | os.PathLike, dest: str | os.PathLike) -> Path:
    """Unpack LAMA's data.zip so that ``dest`` holds relations.jsonl, TREx/ and Google_RE/."""
    return unpack(archive, dest, "relations.jsonl", "LAMA's data.zip")


def unpack_lpaqa_trex_train(archive: str | os.PathLike, dest: str | os.PathLike) -> Path:
    """Unpack LPAQA's TREx_train.tar.gz so that ``dest`` holds its P*.jsonl files."""
    return unpack(archive, dest, "P*.jsonl", "LPAQA's TREx_train.tar.gz")


def unpack_lpaqa_prompts(archive: str | os.PathLike, dest: str | os.PathLike) -> Path:
    """Unpack LPAQA's repository archive so that ``dest`` holds its prompt/ folder (mine/,
    paraphrase/, manual_paraphrase/)."""
    dest = unpack(archive, dest, "manual_paraphrase/P*.txt", "an archive of LPAQA's repository")
    missing = [name for name in ("mine", "paraphrase", "manual_paraphrase") if not (dest / name).is_dir()]
    if missing:
        raise KnowprobeError(f"{archive}: its prompt/ folder lacks {', '.join(missing)}")
    return dest
