"""The config schema: every key described with one default, defaults filled in across the study
schema files, one-line errors naming the key, and settings classes that take their defaults
from the schema rather than repeating them."""

import dataclasses

import pytest
import yaml

from knowprobe import config
from knowprobe.demo_model import TinyLMSettings
from knowprobe.io import KnowprobeError
from knowprobe.lpaqa.demo_translator import TinyTranslatorSettings
from knowprobe.lpaqa.paraphrase import ParaphraseSettings
from knowprobe.lpaqa.selection import OptiSettings
from knowprobe.scoring import ScoringSettings

from conftest import ROOT

REQUIRED_WITHOUT_DEFAULT = {  # declared by the user, never guessed
    "models.*.kind",
    # an S-TEST relation a user adds states how its paths run and how it is asked
    "stest.relations.*.start",
    "stest.relations.*.step",
    "stest.relations.*.template",
    "stest.relations.*.cascade",
}


def schema_leaves(node, document, path=""):
    """(key path, schema node) of every key, following $ref into other schema files."""
    node, document = config._resolve(node, document) if "$ref" in node else (node, document)
    for key, child in node.get("properties", {}).items():
        yield f"{path}{key}", child
        yield from schema_leaves(child, document, f"{path}{key}.")
    if isinstance(node.get("additionalProperties"), dict):
        yield from schema_leaves(node["additionalProperties"], document, f"{path}*.")
    for branch in node.get("oneOf", []):
        yield from schema_leaves(branch, document, path)


def test_every_config_key_has_a_description_and_a_default():
    keys = list(schema_leaves(config._document(config.MAIN_SCHEMA), config.MAIN_SCHEMA))
    assert len(keys) > 60 and any(key.startswith("lpaqa.paraphrase.forward.train.") for key, _ in keys)
    for key, node in keys:
        described = node.get("description") or config._resolve(node, config.MAIN_SCHEMA)[0].get("description")
        assert described, f"{key} has no description"
        if key not in REQUIRED_WITHOUT_DEFAULT:
            assert "default" in node, f"{key} has no default"


def test_validation_fills_in_defaults_across_the_study_schema_files():
    filled = config.validate({"models": {"m": {"kind": "masked", "hub_id": "m"}}, "lpaqa": {"probe": {}}})
    assert filled["scoring"]["batch_size"] == "auto" and filled["studies"] == ["lpaqa"]
    assert filled["lpaqa"]["probe"]["top_k"] == 50
    assert filled["lpaqa"]["paraphrase"]["backward"]["hub_id"] == "facebook/wmt19-de-en"
    assert filled["lpaqa"]["lama"]["google_re_templates"]["date_of_birth"] == "[X] (born [Y])."
    # defaults are copies: filling one config never changes another's
    filled["lpaqa"]["datasets"].append("x")
    assert config.validate({"models": {"m": {"kind": "causal", "path": "p"}}})["lpaqa"]["datasets"] == [
        "trex",
        "google_re",
    ]


def test_the_full_and_the_demo_config_are_valid():
    for path in ["config.yaml", "resources/demo/config.yaml"]:
        config.validate(yaml.safe_load((ROOT / path).read_text()))


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"models": {"m": {"hub_id": "x"}}}, "config models.m: 'kind' is a required property"),
        (
            {"modles": {}},
            "config modles: unknown key (allowed here: comps, lpaqa, models, scoring, stest, studies, "
            "uncertainty, wikidata)",
        ),
        ({"lpaqa": {"probe": {"batch_sise": 3}}}, "config lpaqa.probe.batch_sise: unknown key (allowed here: top_k)"),
        ({"lpaqa": {"trex_train": {"per_relation": 0}}}, "config lpaqa.trex_train.per_relation: 0 is less than"),
        ({"models": {"m": {"kind": "seq2seq", "path": "p"}}}, "config models.m.kind: 'seq2seq' is not one of"),
        ({"studies": ["lpaqa", "nonsense"]}, "config studies.1: 'nonsense' is not one of"),
    ],
)
def test_config_errors_are_one_line_naming_the_key(bad, message):
    with pytest.raises(KnowprobeError) as error:
        config.validate(bad)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


@pytest.mark.parametrize(
    "settings, path, exempt",
    [
        (ScoringSettings, ("scoring",), set()),
        (ParaphraseSettings, ("lpaqa", "paraphrase"), set()),
        (TinyLMSettings, ("models", "*", "train"), set()),
        (TinyTranslatorSettings, ("lpaqa", "paraphrase", "forward", "train"), set()),
        (OptiSettings, ("lpaqa", "selection", "opti"), set()),
    ],
)
def test_settings_classes_take_every_default_from_the_schema(settings, path, exempt):
    defaults = config.schema_defaults(*path)
    for field in dataclasses.fields(settings):
        assert field.name in defaults, f"{settings.__name__}.{field.name} is not a key of {'.'.join(path)}"
        assert field.default == defaults[field.name]
