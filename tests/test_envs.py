"""Each rule's conda env declares the third-party packages its script imports.

With ``--software-deployment-method conda`` a rule runs in its env alone, so a package that
only the development environment has (rapidgzip was missing from envs/mining.yaml once) breaks
the rule on a cluster and nowhere else. The imports are those ``knowprobe.provenance`` finds: the
script's, and through ``knowprobe`` every module it uses, lazy imports inside functions included.
"""

import importlib.metadata
import re

import pytest
import yaml

from knowprobe import config as knowprobe_config
from knowprobe import provenance

from conftest import ROOT, rule_script, smk_rules

# conda-forge names that differ from the distribution's name on PyPI
CONDA_NAMES = {"pytorch": "torch", "matplotlib-base": "matplotlib"}
# imports a rule's script reaches but never runs: lazy imports inside functions it does not call
NEVER_RUN = {"jsonschema", "referencing"}  # knowprobe.config.validate runs in Snakemake's process, not in jobs
UNUSED_LAZY_IMPORTS = {
    "lpaqa_select_paraphrase_seeds": {"torch", "transformers"},  # only paraphrase.select_mined_seeds (pandas)
    "lpaqa_download_translator": {"gguf"},  # download_model.py reads a GGUF file for models, never for translators
}


def script_rules():
    """(rule, env file, script) of every rule with a ``script:``; the env as the default config
    chooses it (``conda:`` may be an expression of the config)."""
    config = knowprobe_config.validate(yaml.safe_load((ROOT / "config.yaml").read_text()))
    for smk, name, body in smk_rules():
        conda = re.search(r"^\s*conda:\s*\n\s*(.+)$", body, re.M)
        script = rule_script(smk, body)
        if script:
            assert conda, f"{smk.name}: rule {name} runs a script but names no conda env"
            env = eval(conda.group(1), {"config": config, "LPAQA": config["lpaqa"]})  # a string, or a conditional
            yield name, (smk.parent / env).resolve(), script


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def env_packages(env) -> set[str]:
    specs = []
    for dependency in yaml.safe_load(env.read_text())["dependencies"]:
        specs += (dependency.get("pip") or []) if isinstance(dependency, dict) else [dependency]
    names = {normalize(re.split(r"[<>=!~\[ ]", spec.strip(), maxsplit=1)[0]) for spec in specs}
    return {CONDA_NAMES.get(name, name) for name in names}


RULES = list(script_rules())


def test_rules_with_scripts_are_found():
    assert len(RULES) > 30 and {"lpaqa_distant_supervision", "lpaqa_wikipedia_extract", "lpaqa_probe"} <= {
        r for r, _, _ in RULES
    }


@pytest.mark.parametrize("rule, env, script", RULES, ids=[rule for rule, _, _ in RULES])
def test_env_declares_what_the_rule_imports(rule, env, script):
    distributions = importlib.metadata.packages_distributions()
    declared = env_packages(env)
    missing = []
    _, imported = provenance.reach(script)
    for module in sorted(imported - NEVER_RUN - UNUSED_LAZY_IMPORTS.get(rule, set())):
        owners = {normalize(name) for name in distributions.get(module, [module])}
        if not owners & declared:
            missing.append(f"{module} ({', '.join(sorted(owners))})")
    assert not missing, f"rule {rule}: {env.name} lacks {', '.join(missing)}"
