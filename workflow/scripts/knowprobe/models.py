"""Models and tokenizers: fetched from the Hugging Face hub, and loaded by their declared kind.

The workflow downloads hub models once (``download_model`` rule, on a node with network) into
``resources/models/<name>``; every later rule loads from that directory, so GPU nodes of a cluster
need no network.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

from .io import KnowprobeError

log = logging.getLogger(__name__)

# Weights and tokenizer files (.spm: Marian's SentencePiece models); safetensors preferred, .bin only where a
# repository has no safetensors.
HUB_PATTERNS = ["*.json", "*.txt", "*.model", "*.spm", "*.safetensors", "merges.txt", "vocab.*"]


def download_hub_model(
    hub_id: str, revision: str, dest: str | Path, name: str | None = None, tries: int = 3, checks=None
) -> Path:
    """Fetch a hub model's files into ``dest``. A connection error is tried again (``tries`` in
    all, waiting longer each time); a model the hub does not have, or no network allowed
    (HF_HUB_OFFLINE), is one error at once, naming the way to use a local copy: the rule itself is
    not retried, so the message is printed once.

    With ``checks`` (knowprobe.download.Checks): the revision is resolved to its commit, or taken
    from the lock file where an earlier download recorded it (so a branch that moved since, on the
    hub or for another clone or cluster node with the same lock file, still gives the same files);
    each file is verified against its SHA-256 in the lock file, else against the hub's listing (the
    SHA-256 of a large file, the git blob id of a small one); the commit and the files' digests are
    recorded in the lock file."""
    import time

    from huggingface_hub import HfApi, constants, snapshot_download
    from huggingface_hub.errors import OfflineModeIsEnabled

    if constants.HF_HUB_OFFLINE:
        return copy_from_cache(hub_id, revision, dest, name, checks)
    key = f"{hub_id}@{revision}"
    locked = {}
    if checks is not None and checks.checksum != "none":
        from .download import read_lock

        locked = read_lock(checks.lock)["models"].get(key) or {}
    fetch_revision = locked.get("commit") or revision
    for attempt in range(1, tries + 1):
        try:
            info = HfApi().model_info(hub_id, revision=fetch_revision, files_metadata=True)
            break
        except Exception as error:  # the hub client raises many error types; all mean "cannot load"
            transient = isinstance(error, (ConnectionError, TimeoutError, OSError)) and not isinstance(
                error, OfflineModeIsEnabled
            )
            if transient and attempt < tries:
                log.warning("hub unreachable (%s); trying again in %d s", type(error).__name__, 10 * attempt)
                time.sleep(10 * attempt)
                continue
            config_key = f"models.{name}.path" if name else "the model's path"
            raise KnowprobeError(
                f"model {hub_id!r} (revision {fetch_revision}) cannot be fetched from the hub: "
                f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}; "
                f"to use a local copy, set {config_key} to its directory (save_pretrained layout) instead of hub_id"
            ) from None
    listed = {sibling.rfilename: sibling for sibling in info.siblings or []}
    patterns = hub_patterns(listed)
    commit = info.sha or fetch_revision
    path = snapshot_download(hub_id, revision=commit, local_dir=str(dest), allow_patterns=patterns)
    log.info("downloaded %s@%s (commit %s) to %s", hub_id, revision, commit, path)
    if checks is not None:
        verify_hub_files(Path(dest), key, commit, listed, locked, checks)
    return Path(path)


def hub_patterns(files) -> list[str]:
    """The files of a hub repository ``download_hub_model`` fetches: safetensors weights where the
    repository has them, else its .bin weights."""
    patterns = list(HUB_PATTERNS)
    if not any(name.endswith(".safetensors") for name in files):
        patterns.append("pytorch_model*.bin")
    return patterns


def git_blob_id(path: Path) -> str:
    """The git blob id (SHA-1 of ``blob SIZE\\0`` and the content) the hub lists for a small file."""
    import hashlib

    digest = hashlib.sha1(f"blob {path.stat().st_size}\0".encode())
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 24):
            digest.update(chunk)
    return digest.hexdigest()


def verify_hub_files(
    dest: Path, key: str, commit: str, listed: dict, locked: dict, checks, patterns: list[str] | None = None
) -> None:
    """Verify the downloaded files of a hub model (see ``download_hub_model``) and record them;
    ``patterns``: the files fetched where not the model's (one GGUF file: the files recorded
    earlier at the same commit, other GGUF files of the repository, are kept)."""
    import fnmatch

    from .download import check_digest, editing_lock, file_digest, now

    if checks.checksum == "none":
        log.warning("downloads.checksum is none: %s (%s, commit %s) is not verified", dest, key, commit)
    files = {}
    kept = patterns is not None
    patterns = patterns if patterns is not None else hub_patterns(listed)
    for name in sorted(listed):
        if not any(fnmatch.fnmatch(name, pattern) for pattern in patterns) or not (dest / name).is_file():
            continue
        path = dest / name
        found = file_digest(path, "sha256")
        files[name] = {"sha256": found, "bytes": path.stat().st_size}
        if checks.checksum == "none":
            continue
        recorded = (locked.get("files") or {}).get(name)
        sibling = listed[name]
        if recorded:
            check_digest(path, "sha256", recorded["sha256"], f"the lock file {checks.lock} ({key})", found)
        elif sibling.lfs is not None:
            check_digest(path, "sha256", sibling.lfs.sha256, f"the hub's listing of {key} at {commit}", found)
        elif sibling.blob_id:
            check_digest(
                path, "git blob id", sibling.blob_id, f"the hub's listing of {key} at {commit}", git_blob_id(path)
            )
    against = (
        "not verified (downloads.checksum: none)"
        if checks.checksum == "none"
        else f"the lock file {checks.lock}"
        if locked
        else f"the hub's listing at commit {commit} (recorded in {checks.lock})"
    )
    if checks.lock is None:
        return
    with editing_lock(checks.lock) as data:
        old = data["models"].get(key, {})
        if kept and old.get("commit") == commit:
            files = {**old.get("files", {}), **files}
        data["models"][key] = {
            "directory": str(dest),
            "commit": commit,
            "files": files,
            "recorded": old.get("recorded") if old.get("commit") == commit else now(),
            "verified_against": against,
        }


def copy_from_cache(hub_id: str, revision: str, dest: str | Path, name: str | None = None, checks=None) -> Path:
    """With HF_HUB_OFFLINE: a hub model's files from the hub's local cache (HF_HUB_CACHE, filled by
    an earlier download where there was network) into ``dest``, the files ``download_hub_model``
    would fetch. With ``checks`` and a record of the model in the lock file, the cache's copy at
    the recorded commit is taken and each file held to its recorded SHA-256, as a download is
    (another clone or node, with the same lock file, gets the same files or one line)."""
    import fnmatch
    import shutil

    from huggingface_hub import snapshot_download

    key = f"{hub_id}@{revision}"
    locked = {}
    if checks is not None and checks.checksum != "none":
        from .download import read_lock

        locked = read_lock(checks.lock)["models"].get(key) or {}
    try:
        cached = Path(snapshot_download(hub_id, revision=locked.get("commit") or revision, local_files_only=True))
    except Exception as error:  # not in the cache, or only part of it
        key = f"models.{name}.path" if name else "the model's path"
        at = f", commit {locked['commit']} as the lock file {checks.lock} records" if locked.get("commit") else ""
        raise KnowprobeError(
            f"model {hub_id!r} (revision {revision}{at}) cannot be fetched: HF_HUB_OFFLINE is set and the hub's "
            "cache has no copy "
            f"({type(error).__name__}); fill the cache where there is network (hf download {hub_id}), "
            f"or set {key} to its directory (a local copy, save_pretrained layout) instead of hub_id"
        ) from None
    files = [f for f in cached.rglob("*") if f.is_file()]
    patterns = list(HUB_PATTERNS)
    if not any(f.name.endswith(".safetensors") for f in files):
        patterns.append("pytorch_model*.bin")
    Path(dest).mkdir(parents=True, exist_ok=True)
    for file in files:
        relative = file.relative_to(cached)
        if any(fnmatch.fnmatch(str(relative), p) for p in patterns):
            (Path(dest) / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(file, Path(dest) / relative)  # the cache's files are links into its blobs
    log.info("copied %s@%s from the hub's cache %s to %s", hub_id, revision, cached, dest)
    if locked:
        verify_cached_copy(Path(dest), key, locked, checks)
    elif checks is not None:
        log.warning("%s: not in the lock file %s; the hub's cache copy is taken unverified", key, checks.lock)
    return Path(dest)


def verify_cached_copy(dest: Path, key: str, locked: dict, checks) -> None:
    """A copy from the hub's cache held to the lock file's record of ``key``: every recorded file
    present, each with its recorded SHA-256 (``check_digest``: a mismatch deletes it, one line)."""
    from .download import check_digest

    against = f"the lock file {checks.lock} ({key}, commit {locked.get('commit', '?')})"
    for file, record in sorted((locked.get("files") or {}).items()):
        path = dest / file
        if not path.is_file():
            raise KnowprobeError(
                f"{path}: recorded in {against} but not in the hub's cache copy; fill the cache where there is "
                f"network (hf download {key.split('@')[0]} --revision {locked.get('commit', '?')})"
            )
        if record.get("sha256"):
            check_digest(path, "sha256", record["sha256"], against)
    log.info("%s: the hub's cache copy verified against %s", key, against)


def hub_problem(models: dict[str, tuple[str, str]], timeout: float = 10.0) -> str | None:
    """Whether the hub models a run downloads (``models``: where each goes, a config key or name ->
    (hub_id, revision)) can be had, checked once before any job: with HF_HUB_OFFLINE, each in the
    hub's local cache; else the hub answering one request (no retries: a client's retries cost
    half a minute before a run on a machine without network fails). One line saying what to do,
    or None."""
    if not models:
        return None
    from huggingface_hub import HfApi, constants, try_to_load_from_cache

    def listed(keys):
        shown = ", ".join(sorted(keys)[:4])
        return shown + (f" and {len(keys) - 4} more" if len(keys) > 4 else "")

    remedy = (
        "give each a local copy (a `path` to its save_pretrained directory instead of `hub_id`), or set "
        "HF_HUB_OFFLINE=1 with each in the hub's cache (`hf download HUB_ID` where there is network)"
    )
    if constants.HF_HUB_OFFLINE:
        missing = [
            key
            for key, (hub_id, revision) in models.items()
            if not isinstance(try_to_load_from_cache(hub_id, "config.json", revision=revision), str)
        ]
        if not missing:
            return None
        return (
            f"HF_HUB_OFFLINE is set and the hub's cache ({constants.HF_HUB_CACHE}) lacks {len(missing)} of this "
            f"run's {len(models)} hub models ({listed(missing)}): fill it where there is network "
            "(`hf download HUB_ID`), or give each a local copy (a `path` to its save_pretrained directory "
            "instead of `hub_id`)"
        )
    hub_id, revision = next(iter(models.values()))
    try:
        HfApi().model_info(hub_id, revision=revision, timeout=timeout)
    except Exception as error:  # the hub client's connection errors have no common base but these
        from huggingface_hub.errors import HfHubHTTPError

        if isinstance(error, HfHubHTTPError):
            return None  # the hub answered (a model it lacks is the download's own one-line error)
        reason = str(error).splitlines()[0] if str(error) else ""
        return (
            f"the Hugging Face hub ({constants.ENDPOINT}) cannot be reached ({type(error).__name__}: {reason}), "
            f"and this run downloads {len(models)} hub models ({listed(models)}): {remedy}"
        )
    return None


KINDS = ("masked", "causal")


WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)
# what AutoTokenizer can build a tokenizer from: a fast tokenizer's file, a WordPiece or BPE
# vocabulary, or a SentencePiece model
TOKENIZER_FILES = (
    ("tokenizer.json",),
    ("vocab.txt",),
    ("vocab.json", "merges.txt"),
    ("spiece.model",),
    ("sentencepiece.bpe.model",),
    ("tokenizer.model",),
    ("source.spm",),  # Marian
    ("vocab-src.json", "merges.txt"),  # FSMT (the WMT'19 translators)
)


def config_json_problem(path: str | Path) -> tuple[dict | None, str | None]:
    """A model's ``config.json`` read, or what is wrong with it (not UTF-8, not JSON, not an object)."""
    import json

    try:
        parsed = json.loads(Path(path).read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        return None, "not UTF-8 text"
    except json.JSONDecodeError as error:
        return None, f"not JSON ({error.msg}, line {error.lineno} column {error.colno})"
    if not isinstance(parsed, dict):
        return None, f"a JSON {type(parsed).__name__}, not an object"
    return parsed, None


def read_model_config(path: str | Path) -> dict:
    """A model's ``config.json``; one line naming the file where it is not a JSON object."""
    parsed, problem = config_json_problem(path)
    if problem:
        raise KnowprobeError(f"{path}: {problem}; a model's config.json is one JSON object (save_pretrained writes it)")
    return parsed


def gguf_file(model: str | Path) -> Path | None:
    """The GGUF file a model is loaded from: ``model`` itself where it is a .gguf file, or the one
    .gguf file of a directory without config.json (download_model's folder of a GGUF model,
    knowprobe.gguf_models); None for a save_pretrained directory."""
    model = Path(model)
    if model.is_file() and model.suffix.lower() == ".gguf":
        return model
    if model.is_dir() and not (model / "config.json").is_file():
        # a hub file may lie in a folder of its repository; the hub client keeps its own records in .cache
        found = sorted(path for path in model.rglob("*.gguf") if ".cache" not in path.relative_to(model).parts)
        if len(found) == 1:
            return found[0]
    return None


def dequantized_copy(model: str | Path) -> Path | None:
    """The folder download_model unpacked a GGUF model into (``dequantized/`` beside the file, a
    save_pretrained copy: knowprobe.gguf_models.save_dequantized), or None where there is none (a
    GGUF file given directly, or a folder made before the copy was written: the file is read)."""
    from .gguf_models import DEQUANTIZED

    saved = Path(model) / DEQUANTIZED
    return saved if (saved / "config.json").is_file() else None


def local_model_problem(model_dir: str | Path) -> str | None:
    """What a local model directory lacks for the loader (its config, a tokenizer, weights), or
    None: checked before any job runs, so that a wrong path is not found hours into a run."""
    model_dir = Path(model_dir)
    if not (model_dir / "config.json").is_file():
        found = sorted(path.name for path in model_dir.glob("*.gguf"))
        if found:
            return (
                f"holds no config.json but the GGUF file{'s' if len(found) > 1 else ''} {', '.join(found)}: a GGUF "
                f"model is given by its file (the model's gguf: or path: key, e.g. gguf: {model_dir / found[0]})"
            )
        return "holds no config.json (a model saved with save_pretrained has one)"
    problem = config_json_problem(model_dir / "config.json")[1]
    if problem:
        return f"holds a config.json that is {problem}; a model's config.json is one JSON object"
    if not any(all((model_dir / name).is_file() for name in names) for names in TOKENIZER_FILES):
        return (
            "holds no tokenizer files (tokenizer.json, vocab.txt, vocab.json with merges.txt, or a SentencePiece model)"
        )
    if not any((model_dir / name).is_file() for name in WEIGHT_FILES):
        return "holds no weights (model.safetensors or pytorch_model.bin)"
    return None


def special_token_problem(tokenizer, role: str) -> str | None:
    """Why the tokenizer's ``role`` token (``mask``, ``bos``) is not a special token with an id of
    its own, or None where it is. A tokenizer whose vocabulary lacks the token its config names
    (``mask_token: "[MASK]"`` in tokenizer_config.json, no ``[MASK]`` in tokenizer.json) gets it
    from transformers under a new id, which can be that of an ordinary word: the model then reads
    that word where the mask should be, and every score is silently wrong."""
    token = getattr(tokenizer, f"{role}_token")
    if token is None:
        return f"the tokenizer has no {role} token"
    token = str(token)
    token_id = tokenizer.convert_tokens_to_ids(token)
    unk = tokenizer.unk_token_id
    if token_id is None or (token_id == unk and token != str(tokenizer.unk_token)):
        return f"the tokenizer's {role} token {token!r} is not in its vocabulary"
    sharing = sorted(other for other, number in tokenizer.get_vocab().items() if number == token_id and other != token)
    if sharing:
        return (
            f"the tokenizer's {role} token {token!r} has id {token_id}, which is also the id of {sharing[0]!r}: its "
            f"vocabulary (tokenizer.json, vocab.txt) lacks {token!r}, and transformers added it under an "
            "ordinary word's id"
        )
    if token_id not in tokenizer.all_special_ids:
        return f"the tokenizer's {role} token {token!r} (id {token_id}) is not one of its special tokens"
    return None


def load_tokenizer(model_dir: str | Path, kind: str, start_token: bool = False):
    """A model's tokenizer, checked for what its kind uses: a masked model's mask token, and a
    causal model's BOS where texts start with it (``start_token``), each a special token with an
    id of its own."""
    from transformers import AutoTokenizer

    gguf = gguf_file(model_dir)
    saved = dequantized_copy(model_dir) if gguf is not None else None
    try:
        if saved is not None:  # the tokenizer download_model built from the file once
            tokenizer = AutoTokenizer.from_pretrained(str(saved))
        elif gguf is not None:  # built from the file's metadata (its vocabulary, merges, special tokens)
            tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        else:
            tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    except Exception as error:  # transformers raises many types; all mean "cannot load"
        raise KnowprobeError(f"{model_dir}: cannot load a tokenizer ({type(error).__name__}: {error})") from None
    if kind == "masked" and tokenizer.mask_token is None:
        raise KnowprobeError(f"{model_dir}: the tokenizer has no mask token, but the config says kind: masked")
    roles = ["mask"] if kind == "masked" else ["bos"] if start_token and tokenizer.bos_token is not None else []
    for role in roles:
        problem = special_token_problem(tokenizer, role)
        if problem:
            raise KnowprobeError(f"{model_dir}: {problem}; the model cannot be scored with it")
    return tokenizer


def token_ids_problem(tokenizer, model, kind: str, start_token: bool = False) -> str | None:
    """Where a special token the scorer uses has an id past the model's embeddings, or None."""
    size = model.get_input_embeddings().num_embeddings
    roles = ["mask"] if kind == "masked" else ["bos"] if start_token and tokenizer.bos_token is not None else []
    for role in roles:
        token_id = getattr(tokenizer, f"{role}_token_id")
        if token_id is not None and not 0 <= token_id < size:
            return (
                f"the tokenizer's {role} token has id {token_id}, past the model's {size} embeddings: "
                "tokenizer and weights do not belong together"
            )
    return None


def dequantized() -> dict:
    """from_pretrained's arguments that unpack every weight of a GGUF file into a plain dense
    model (transformers from 5.x on would otherwise keep quantized blocks where it has a kernel
    for them, on a GPU: other numbers than the same model's dequantized weights); earlier
    versions always unpack."""
    try:
        from transformers import GgufConfig
    except ImportError:
        return {}
    return {"quantization_config": GgufConfig(dequantize=True)}


def plain_model(model) -> None:
    """A model dequantized from GGUF, made what it is: a plain dense model (transformers keeps
    its GGUF quantizer attached, which refuses save_pretrained and changes of dtype)."""
    if getattr(model, "hf_quantizer", None) is not None:
        model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    if getattr(model, "is_quantized", False):
        with contextlib.suppress(AttributeError):  # a property of the quantizer in some versions
            model.is_quantized = False


def load_model(model_dir: str | Path, kind: str, dtype=None):
    """A masked or causal LM in eval mode; ``dtype`` a torch dtype (None: as saved)."""
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM

    if kind not in KINDS:
        raise KnowprobeError(f"{model_dir}: model kind {kind!r} is not one of {', '.join(KINDS)}")
    auto = AutoModelForMaskedLM if kind == "masked" else AutoModelForCausalLM
    gguf = gguf_file(model_dir)
    saved = dequantized_copy(model_dir) if gguf is not None else None
    try:
        if saved is not None:  # unpacked once by download_model: no job dequantizes the file again
            model = auto.from_pretrained(str(saved), dtype=dtype)
        elif gguf is not None:
            model = auto.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=dtype, **dequantized())
            plain_model(model)
        else:
            model = auto.from_pretrained(str(model_dir), dtype=dtype)
    except Exception as error:
        raise KnowprobeError(
            f"{model_dir}: cannot load a {kind} language model ({type(error).__name__}: {error})"
        ) from None
    if gguf is not None:
        from .gguf_models import describe

        described = describe(model_dir)
        log.info(
            "%s: GGUF file %s (%s, quantization %s), dequantized %s, at %s",
            model_dir,
            gguf.name,
            described.get("architecture"),
            described.get("quantization"),
            f"once into {saved}" if saved is not None else "now",
            str(next(model.parameters()).dtype).removeprefix("torch."),
        )
    return model.eval()


def kind_problem(model_config: dict, kind: str) -> str | None:
    """Why a model with this ``config.json`` cannot be loaded as ``kind``, or None if it can: its
    ``model_type`` must have a masked (or causal) LM class in transformers."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    mappings = {"masked": MODEL_FOR_MASKED_LM_MAPPING_NAMES, "causal": MODEL_FOR_CAUSAL_LM_MAPPING_NAMES}
    model_type = model_config.get("model_type")
    if model_type is None:
        return "its config.json names no model_type"
    encoder_only = (
        model_type in mappings["masked"]
        and not model_config.get("is_decoder", False)
        and not model_config.get("is_encoder_decoder", False)
    )
    if kind == "causal" and encoder_only:
        # transformers lists BERT, RoBERTa, ELECTRA... among causal LMs (their decoder variants),
        # but this checkpoint attends both ways: as a causal LM it would see the token it predicts
        return (
            f"model_type {model_type!r} is an encoder (its attention sees both sides, is_decoder is not set): "
            "scored left to right it would see the token it predicts; kind: masked"
        )
    if model_type in mappings[kind]:
        return None
    other = next((k for k, names in mappings.items() if k != kind and model_type in names), None)
    hint = f"; it is a {other} LM: kind: {other}" if other else f"; transformers has no {kind} LM of this type"
    return f"model_type {model_type!r} is not a {kind} language model{hint}"


def hub_config(hub_id: str, revision: str) -> dict | None:
    """A hub model's config.json (one small file), or None where it cannot be fetched."""
    import json

    try:
        from huggingface_hub import hf_hub_download

        return json.loads(Path(hf_hub_download(hub_id, "config.json", revision=revision)).read_text())
    except Exception:  # offline, unknown model, ...: the download rule reports it
        return None


def hub_size(hub_id: str, revision: str, gguf: str | None = None) -> int | None:
    """Bytes of the files ``download_hub_model`` fetches of a hub model (``gguf``: of that one
    GGUF file), or None offline."""
    import fnmatch

    try:
        from huggingface_hub import HfApi

        info = HfApi().model_info(hub_id, revision=revision, files_metadata=True)
    except Exception:  # offline, unknown model, ...: the download rule reports it
        return None
    files = {s.rfilename: s.size or 0 for s in info.siblings or []}
    patterns = [gguf] if gguf else hub_patterns(files)
    return sum(size for name, size in files.items() if any(fnmatch.fnmatch(name, p) for p in patterns))
