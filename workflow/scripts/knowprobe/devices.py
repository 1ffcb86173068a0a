"""Where models run: a CUDA GPU that no other knowprobe job holds, or the CPU, and in which precision.

Shared by every GPU rule (the scorers, paraphrasing).
"""

from __future__ import annotations

import fcntl
import logging
import os
import socket
import tempfile
from pathlib import Path

import torch

from .io import KnowprobeError

log = logging.getLogger(__name__)


def resolve_device(name: str) -> torch.device:
    if name.startswith("cuda") and not torch.cuda.is_available():
        # a node without a working GPU (none allocated, no driver, a CPU build of torch) fails
        # here in one line, not in torch's traceback at the first tensor moved
        visible = os.environ.get("CUDA_VISIBLE_DEVICES", "unset")
        raise KnowprobeError(
            f"config scoring.device: {name}, but this machine ({socket.gethostname()}) has no usable CUDA "
            f"device (torch {torch.__version__}, CUDA_VISIBLE_DEVICES={visible}); use auto to fall back to the CPU"
        )
    if name != "auto":
        return torch.device(name)
    if not torch.cuda.is_available():
        return torch.device("cpu")
    return torch.device("cuda", claim_gpu())


_gpu_locks: list = []


def claim_gpu() -> int:
    """Index of a visible GPU that no other knowprobe job on this machine holds.

    Snakemake counts ``gpu`` resources but assigns no devices; under SLURM the scheduler sets
    CUDA_VISIBLE_DEVICES to the job's own GPU. On a workstation run with ``--resources gpu=N``,
    each job takes a different GPU by locking a file per device.
    """
    count = torch.cuda.device_count()
    if count <= 1:
        return 0
    lock_dir = Path(tempfile.gettempdir()) / f"knowprobe-gpu-{os.getuid()}"
    lock_dir.mkdir(exist_ok=True)
    for index in range(count):
        handle = open(lock_dir / f"{index}.lock", "w")  # noqa: SIM115 (held until the process exits)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            continue
        _gpu_locks.append(handle)
        return index
    log.warning("all %d GPUs are held by other knowprobe jobs; sharing GPU 0", count)
    return 0


def resolve_dtype(name: str, device: torch.device, saved: torch.dtype | None = None) -> torch.dtype:
    """The precision ``scoring.dtype`` names. ``auto``: float32 on the CPU; on CUDA float16 for a
    checkpoint saved in float32 or float16 (``saved``: BERT, RoBERTa, GPT-2, ...), whose activations
    fit float16's range and keep its three more mantissa bits (on the demo's trained BERTs float16
    changed the correctness of 0.003% of the probe's answers, bfloat16 of 0.097%: docs/scoring.md),
    and bfloat16 for a checkpoint saved in bfloat16 (Llama, Qwen2, ...: trained in it, its
    activations may pass float16's 65,504) or of unknown precision (``saved`` None); float16
    where the GPU has no bfloat16."""
    if name == "auto":
        if device.type != "cuda":
            return torch.float32
        if saved in (torch.float32, torch.float16) or not torch.cuda.is_bf16_supported():
            return torch.float16
        return torch.bfloat16
    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]


def saved_dtype(model_dir) -> torch.dtype | None:
    """The precision a saved model is in: what its config.json declares (``dtype``, formerly
    ``torch_dtype``), else the floating-point type of its safetensors weights (older hub
    checkpoints such as bert-base-cased declare none); None where neither says."""
    import json
    import struct
    from pathlib import Path

    names = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
    directory = Path(model_dir)
    try:
        config = json.loads((directory / "config.json").read_text())
    except (OSError, ValueError):
        config = {}
    declared = names.get(config.get("dtype") or config.get("torch_dtype"))
    if declared is not None:
        return declared
    header_types = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
    for weights in sorted(directory.glob("*.safetensors")):
        try:
            with open(weights, "rb") as handle:
                (size,) = struct.unpack("<Q", handle.read(8))
                header = json.loads(handle.read(size))
        except (OSError, ValueError, struct.error):
            continue
        found = {header_types.get(entry.get("dtype")) for entry in header.values() if isinstance(entry, dict)}
        found.discard(None)
        if len(found) == 1:
            return found.pop()
    return None


def is_out_of_memory(error: BaseException) -> bool:
    return isinstance(error, torch.cuda.OutOfMemoryError) or "out of memory" in str(error).lower()
