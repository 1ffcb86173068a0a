"""Each rule declares, as inputs, the knowprobe modules its script runs, derived from the imports.

Snakemake reruns a rule when its script changes, not when a module the script imports does; the
declaration makes an edit of a stage's module rerun that stage (tests/test_workflow.py shows it).
"""

import re

from knowprobe import provenance

from conftest import ROOT, rule_script, smk_rules

SCRIPTS = ROOT / "workflow" / "scripts"
PACKAGE = SCRIPTS / "knowprobe"
# their output is the published file itself: a change to the download helper must not fetch it again
DOWNLOAD_SCRIPTS = {"shared/download", "shared/download_dump", "shared/download_model"}
# the rules' scripts: one folder per study and one of shared ones (the packages beside them hold
# an __init__.py)
RULE_SCRIPTS = sorted(p for p in SCRIPTS.glob("*/*.py") if not (p.parent / "__init__.py").exists())
ALL_RULE_FILES = "\n".join(path.read_text() for path in sorted((ROOT / "workflow" / "rules").rglob("*.smk")))


def test_every_rule_with_a_script_declares_the_modules_of_that_script():
    checked = 0
    for smk, name, body in smk_rules():
        script = rule_script(smk, body)
        if not script:
            continue
        name_of_script = script.relative_to(SCRIPTS).with_suffix("").as_posix()  # <study>/<name>
        declared = re.findall(r'^\s*code=code\("(\w+/\w+)"\),$', body, re.M)
        unpacked = re.search(r"unpack\((\w+)[()\w, =]*\)", body)  # a function, or one a call returns
        if unpacked:  # inputs from a function: its "code" entry
            function = re.search(rf"^def {unpacked.group(1)}\(.*?(?=^\S)", ALL_RULE_FILES, re.M | re.S).group(0)
            declared += re.findall(r'"code": code\("(\w+/\w+)"\)', function)
        if name_of_script in DOWNLOAD_SCRIPTS:
            assert declared == [], f"{smk.name}: download rule {name} must not declare code"
        else:
            assert declared == [name_of_script], (
                f"{smk.name}: rule {name} runs {name_of_script}.py, declares {declared}"
            )
            checked += 1
    assert checked > 25


def test_a_studys_rules_run_scripts_of_its_own_folder_and_the_shared_ones():
    """workflow/rules/<study>/ beside workflow/scripts/<study>/: a study's scripts are its own, the
    rules at the top (Wikidata, models, report) run the shared ones, and no script is left loose."""
    assert not list(SCRIPTS.glob("*.py")), "a rule script at the top of workflow/scripts/"
    studies = {path.name for path in (ROOT / "workflow" / "rules").iterdir() if path.is_dir()}
    assert {path.parent.name for path in RULE_SCRIPTS} == studies | {"shared"}
    run = set()
    for smk, name, body in smk_rules():
        path = rule_script(smk, body)
        if not path:
            continue
        study = smk.parent.name if smk.parent.name in studies else None
        assert path.parent.name in {study, "shared"}, f"{smk.name}: rule {name} runs {path.relative_to(SCRIPTS)}"
        run.add(path)
    assert run == set(RULE_SCRIPTS), f"scripts no rule runs: {sorted(map(str, set(RULE_SCRIPTS) - run))}"


def relative(paths):
    return {str(p.relative_to(PACKAGE)) for p in paths}


def test_modules_are_followed_through_imports_of_every_form():
    # the four rules whose hand-kept lists missed a module before the lists were derived
    assert "tables.py" in relative(provenance.modules(ROOT / "workflow/scripts/lpaqa/lpaqa_mine_prompts.py"))
    assert {"tables.py", "lpaqa/paper.py", "lpaqa/trex_train.py", "config.py", "contracts.py"} <= relative(
        provenance.modules(ROOT / "workflow/scripts/lpaqa/lpaqa_paper_tables.py")
    )
    assert {"demo_model.py", "prompts.py", "io.py"} <= relative(
        provenance.modules(ROOT / "workflow/scripts/shared/train_demo_model.py")
    )
    assert {"prompts.py", "lpaqa/lama.py"} <= relative(
        provenance.modules(ROOT / "workflow/scripts/lpaqa/lpaqa_manual_prompts.py")
    )
    # a subpackage's modules, its __init__, and lazy imports inside functions
    probe = relative(provenance.modules(ROOT / "workflow/scripts/lpaqa/lpaqa_probe.py"))
    scoring = {"scoring/__init__.py", "scoring/masked.py", "scoring/causal.py", "scoring/runtime.py"}
    assert scoring | {"lpaqa/__init__.py", "models.py", "devices.py"} <= probe
    paraphrase = relative(provenance.modules(ROOT / "workflow/scripts/lpaqa/lpaqa_paraphrase.py"))
    assert "devices.py" in paraphrase  # imported inside HFTranslator.__init__
    # an edit of a scorer reruns neither paraphrasing nor the candidate vocabularies
    candidates = relative(provenance.modules(ROOT / "workflow/scripts/lpaqa/lpaqa_candidate_ids.py"))
    assert not scoring & (paraphrase | candidates) and "models.py" in candidates


def test_an_added_import_is_declared_without_anyone_writing_it_down(tmp_path):
    script = tmp_path / "rule_script.py"
    script.write_text("from knowprobe.io import rule_logging\n")
    before = relative(provenance.modules(script))
    script.write_text(
        "from knowprobe.io import rule_logging\n\n\ndef later():\n    from knowprobe.lpaqa import mining\n"
    )
    after = relative(provenance.modules(script))
    assert after - before >= {"lpaqa/mining.py", "lpaqa/__init__.py", "contracts.py", "config.py"}
    modules, third_party = provenance.reach(script)
    assert "spacy" in third_party and "knowprobe" not in third_party


def test_each_file_is_parsed_once_a_process_until_it_changes(tmp_path):
    """The Snakefile asks for about 100 rules' modules, at parse time and again in each job's
    input function: a file is parsed once (a dry run of the demo took 7.3 CPU-seconds, 2.8 with
    this), and again as soon as its time stamp or size changes, as Python's own bytecode cache."""
    import os

    scripts = RULE_SCRIPTS
    first = [provenance.reach(script) for script in scripts]
    misses = provenance._parsed_imports.cache_info().misses
    assert [provenance.reach(script) for script in scripts] == first
    assert provenance._parsed_imports.cache_info().misses == misses

    script = tmp_path / "rule_script.py"
    script.write_text("from knowprobe import tables\n")
    assert "tables.py" in relative(provenance.modules(script))
    stamp = script.stat().st_mtime_ns
    script.write_text("from knowprobe import config\n")  # the same size
    os.utime(script, ns=(stamp + 1_000_000, stamp + 1_000_000))  # a coarse clock could give the same time
    after = relative(provenance.modules(script))
    assert "config.py" in after and "tables.py" not in after
