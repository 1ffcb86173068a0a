"""The README's two commands (issue 39): `./knowprobe.sh demo` and `./knowprobe.sh test` are the
Quickstart's and the tests', the test command installs every extra of pyproject.toml, and .ci/run
runs exactly the README's test command, so that CI tests what a newcomer runs."""

from __future__ import annotations

import re
import shlex
import subprocess

from conftest import ROOT

SCRIPT = ROOT / "knowprobe.sh"


def readme_commands(after: str) -> list[str]:
    """The commands of the README's first bash block after the text ``after`` (comments left out)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text[text.index(after) :].split("```bash\n", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.split("#", 1)[0].strip()]


def commands(path) -> list[str]:
    """A shell script's command lines (comments, blank lines and the shebang left out)."""
    lines = [line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines()]
    return [line for line in lines if line]


def verb(name: str) -> str:
    """The body of one verb of knowprobe.sh's case statement."""
    text = SCRIPT.read_text(encoding="utf-8")
    return re.search(rf"^{name}\)\n(.*?)^    ;;", text, re.S | re.M).group(1)


def extras() -> set[str]:
    """The extras that pyproject.toml declares."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    return set(re.findall(r"^([A-Za-z0-9_-]+)\s*=", section, re.M))


def test_the_readme_gives_two_commands_and_ci_runs_the_second():
    quickstart = readme_commands("## Quickstart")
    assert quickstart[-1] == "./knowprobe.sh demo", quickstart
    assert readme_commands("Tests (offline") == ["./knowprobe.sh test"]
    # .ci/run: the README's test command and nothing else that installs or tests
    ci = [line for line in commands(ROOT / ".ci/run") if not line.startswith(("set ", "cd "))]
    assert ci == ["./knowprobe.sh test"], ci
    assert SCRIPT.stat().st_mode & 0o111, "knowprobe.sh must be executable (git keeps the mode)"


def test_the_test_command_installs_every_extra_and_runs_lint_and_the_suite():
    body = verb("test")
    script = SCRIPT.read_text(encoding="utf-8")
    listed = re.search(r'^EXTRAS="([^"]+)"', script, re.M).group(1)
    assert set(listed.split(",")) == extras() and 'environment "$EXTRAS"' in body
    for package in ("slurm-wlm", "munge", "chromium"):
        assert package in re.search(r'^DEBIAN_PACKAGES="([^"]+)"', script, re.M).group(1)
    assert "debian_packages" in body and "$SPACY_PIPELINE" in body
    for check in ("ruff check .", "ruff format --check .", "snakefmt --check Snakefile workflow/rules"):
        assert check in body
    # the suite last, so that the script's exit status is the tests'
    assert [line.strip() for line in body.strip().splitlines()][-1] == 'python -m pytest -q "$@"'


def test_the_demo_command_runs_the_readmes_demo():
    """The demo is the tiny models' config with the real model's layered over it (issue 53: the
    demo shows a real model); the suite's shared run is the first alone (conftest.DEMO)."""
    from conftest import DEMO

    body = verb("demo")
    assert 'snakemake --cores "$CORES" --configfile $DEMO_CONFIGS "$@"' in body
    configs = "resources/demo/config.yaml resources/demo/real_model.yaml"
    assert f'\nDEMO_CONFIGS="{configs}"' in SCRIPT.read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"`snakemake --cores 2 --configfile {configs}`" in readme
    assert f"`snakemake --report report.html --configfile {configs}`" in readme
    assert DEMO == ["--configfile", configs.split()[0]]
    assert re.search(r"^CORES=\$\{CORES:-2\}$", SCRIPT.read_text(encoding="utf-8"), re.M)


def test_the_script_parses_and_a_wrong_verb_prints_the_usage():
    assert subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True).returncode == 0
    result = subprocess.run(["bash", str(SCRIPT), "tset"], capture_output=True, text=True)
    assert result.returncode == 2 and "./knowprobe.sh demo" in result.stderr and "./knowprobe.sh test" in result.stderr


def test_torch_build_is_a_documented_variable():
    script = SCRIPT.read_text(encoding="utf-8")
    assert re.search(r"^TORCH_SPEC=\$\{TORCH_SPEC:-torch==2\.13\.0\}$", script, re.M)
    assert "TORCH_INDEX_URL=${TORCH_INDEX_URL-https://download.pytorch.org/whl/cpu}" in script
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name in ("TORCH_SPEC", "TORCH_INDEX_URL"):
        assert f"`{name}`" in readme or f"`{name}=" in readme
    # the README's CUDA example is a command the script takes
    example = re.search(r"`(TORCH_INDEX_URL=\S+\s+\./knowprobe\.sh demo)`", readme.replace("\n", " ")).group(1)
    assert shlex.split(example)[-1] == "demo"
