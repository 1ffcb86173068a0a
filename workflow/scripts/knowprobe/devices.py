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
    # tf32: float32 weights and activations; the matrix products' precision is set by use_precision
    return {"float32": torch.float32, "tf32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]


def precision_name(name: str, dtype: torch.dtype) -> str:
    """What a model scored in, for a log: ``tf32`` where ``scoring.dtype`` asked for it (float32
    weights), else its weights' type ("float16", ...)."""
    return "tf32" if name == "tf32" else str(dtype).removeprefix("torch.")


def use_precision(model: torch.nn.Module, name: str, device: torch.device) -> None:
    """What ``scoring.dtype`` asks of a loaded model beyond its weights' type: for ``tf32`` the
    matrix products read float32 operands as TF32 (10 mantissa bits) and accumulate in float32.
    On CUDA that is torch's TF32 mode (for the whole process, a job's own); on the CPU, which
    has no such products, it is emulated (``emulate_tf32``), so that what TF32 does to the
    answers can be measured without a GPU, at no gain in speed. Any other precision sets torch's
    mode back to full float32 products: a job that loads a TF32 model and then a float32 one (COMPS's
    float32 recheck) must not leave the second in TF32."""
    if device.type == "cuda":
        torch.set_float32_matmul_precision("high" if name == "tf32" else "highest")
    elif name == "tf32":
        emulate_tf32(model)


def tf32(tensor: torch.Tensor) -> torch.Tensor:
    """A float32 tensor as a TF32 tensor core reads it: the first 10 bits of each mantissa, the
    other 13 dropped ("only the first 10 bits of the input mantissa are read", PyTorch's notes
    on numerical accuracy). Dropping is the coarser reading; rounding to nearest halves the error."""
    if not isinstance(tensor, torch.Tensor) or tensor.dtype != torch.float32:
        return tensor
    return tensor.contiguous().view(torch.int32).bitwise_and(-(1 << 13)).view(torch.float32)


class TF32Operands(torch.overrides.TorchFunctionMode):
    """Within it, the operands of every float32 matrix product are read as TF32 (``tf32``); sums,
    biases and everything else stay float32, as on a GPU in TF32 mode. Attention's inner product
    of the softmax with the values is inside ``scaled_dot_product_attention``: its queries, keys
    and values are read as TF32, the softmax it multiplies by is not."""

    # the positional operands of each product that are read as TF32 (a bias or addend is not)
    OPERANDS = {
        torch.nn.functional.linear: (0, 1),
        torch.matmul: (0, 1),
        torch.Tensor.matmul: (0, 1),
        torch.Tensor.__matmul__: (0, 1),
        torch.mm: (0, 1),
        torch.bmm: (0, 1),
        torch.Tensor.mm: (0, 1),
        torch.Tensor.bmm: (0, 1),
        torch.addmm: (1, 2),
        torch.baddbmm: (1, 2),
        torch.nn.functional.scaled_dot_product_attention: (0, 1, 2),
    }

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.einsum:
            args = (args[0], *(tf32(a) for a in args[1:]))
        elif func in self.OPERANDS:
            rounded = self.OPERANDS[func]
            args = tuple(tf32(a) if i in rounded else a for i, a in enumerate(args))
        return func(*args, **kwargs)


def emulate_tf32(model: torch.nn.Module) -> None:
    """Run every call of ``model`` or of any of its modules (the LM head a scorer calls alone
    among them) in ``TF32Operands``: the outermost module entered starts it, its return (or
    error) ends it."""
    mode, depth = TF32Operands(), [0]

    def enter(module, args):
        if depth[0] == 0:
            mode.__enter__()
        depth[0] += 1

    def leave(module, args, output):
        depth[0] -= 1
        if depth[0] == 0:
            mode.__exit__(None, None, None)

    for module in model.modules():
        module.register_forward_pre_hook(enter)
        module.register_forward_hook(leave, always_call=True)


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
