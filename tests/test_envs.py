"""Each rule's conda env declares the third-party packages its script imports.

With ``--software-deployment-method conda`` a rule runs in its env alone, so a package that
only the development environment has (rapidgzip was missing from envs/mining.yaml once) breaks
the rule on a cluster and nowhere else. The imports are read from the script and, through
``knowprobe``, from every module it uses, lazy imports inside functions included.
"""

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "workflow" / "scripts" / "knowprobe"
RULE = re.compile(r"^rule (\w+):\n((?:[ \t]+.*\n|[ \t]*\n)*)", re.M)
# conda-forge names that differ from the distribution's name on PyPI
CONDA_NAMES = {"pytorch": "torch"}
# imports a rule's script reaches but never runs: lazy imports inside functions it does not call
UNUSED_LAZY_IMPORTS = {
    "select_paraphrase_seeds": {"torch", "transformers"},  # only paraphrase.select_mined_seeds (pandas)
}


def script_rules():
    """(rule, env file, script) of every rule with a ``script:``; the env as the default config
    chooses it (``conda:`` may be an expression of the config)."""
    from snakemake.utils import validate

    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    validate(
        config, str(ROOT / "workflow" / "schemas" / "config.schema.yaml")
    )  # fills in the defaults, as the workflow does
    for smk in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        for name, body in RULE.findall(smk.read_text()):
            conda = re.search(r"^\s*conda:\s*\n\s*(.+)$", body, re.M)
            script = re.search(r'^\s*script:\s*\n\s*"([^"]+)"', body, re.M)
            if script:
                assert conda, f"{smk.name}: rule {name} runs a script but names no conda env"
                env = eval(conda.group(1), {"config": config})  # a string, or a conditional on the config
                yield name, (smk.parent / env).resolve(), (smk.parent / script.group(1)).resolve()


def third_party_imports(path: Path, seen: set[Path] | None = None) -> set[str]:
    """Top-level names of the modules outside the standard library that ``path`` imports,
    following imports of knowprobe modules."""
    seen = set() if seen is None else seen
    if path in seen:
        return set()
    seen.add(path)
    found: set[str] = set()
    modules: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: inside the knowprobe package
                modules += [node.module] if node.module else [alias.name for alias in node.names]
                continue
            names = [node.module]
            if node.module == "knowprobe":
                modules += [alias.name for alias in node.names]
                continue
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            if top == "knowprobe":
                modules += name.split(".")[1:2]
            elif top not in sys.stdlib_module_names:
                found.add(top)
    for module in modules:
        if (PACKAGE / f"{module}.py").is_file():
            found |= third_party_imports(PACKAGE / f"{module}.py", seen)
    return found


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def env_packages(env: Path) -> set[str]:
    specs = []
    for dependency in yaml.safe_load(env.read_text())["dependencies"]:
        specs += (dependency.get("pip") or []) if isinstance(dependency, dict) else [dependency]
    names = {normalize(re.split(r"[<>=!~\[ ]", spec.strip(), maxsplit=1)[0]) for spec in specs}
    return {CONDA_NAMES.get(name, name) for name in names}


RULES = list(script_rules())


def test_rules_with_scripts_are_found():
    assert len(RULES) > 30 and {"distant_supervision", "wikipedia_extract", "probe"} <= {r for r, _, _ in RULES}


@pytest.mark.parametrize("rule, env, script", RULES, ids=[rule for rule, _, _ in RULES])
def test_env_declares_what_the_rule_imports(rule, env, script):
    distributions = importlib.metadata.packages_distributions()
    declared = env_packages(env)
    missing = []
    for module in sorted(third_party_imports(script) - UNUSED_LAZY_IMPORTS.get(rule, set())):
        owners = {normalize(name) for name in distributions.get(module, [module])}
        if not owners & declared:
            missing.append(f"{module} ({', '.join(sorted(owners))})")
    assert not missing, f"rule {rule}: {env.name} lacks {', '.join(missing)}"
