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
    # a model from PyPI names its pinned wheels, their members and the file's digest
    "models.*.pypi.packages",
    "models.*.pypi.gguf",
    "models.*.pypi.sha256",
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
            "config modles: unknown key (allowed here: bear, comps, downloads, lpaqa, models, report, scoring, stest, "
            "studies, uncertainty, wikidata)",
        ),
        (
            {"lpaqa": {"probe": {"batch_sise": 3}}},
            "config lpaqa.probe.batch_sise: unknown key (allowed here: sample, scores, statement, top_k)",
        ),
        ({"lpaqa": {"trex_train": {"per_relation": 0}}}, "config lpaqa.trex_train.per_relation: 0 is less than"),
        ({"models": {"m": {"kind": "seq2seq", "path": "p"}}}, "config models.m.kind: 'seq2seq' is not one of"),
        ({"studies": ["lpaqa", "nonsense"]}, "config studies.1: 'nonsense' is not one of"),
        # issue 39: "'big' does not match '^auto$'" named neither form
        (
            {"scoring": {"batch_size": "big"}},
            "config scoring.batch_size: 'big' is neither an integer of at least 1 nor auto (expected an integer",
        ),
        (
            {"scoring": {"batch_size": 1.5}},
            "config scoring.batch_size: 1.5 is neither an integer of at least 1 nor auto",
        ),
        (
            {"scoring": {"max_tokens": [8]}},
            "config scoring.max_tokens: [8] is neither an integer of at least 1 nor auto",
        ),
        ({"scoring": {"batch_size": 0}}, "config scoring.batch_size: 0 is less than the minimum of 1"),
        # issue 54: NumPy's "expected non-negative integer" in the interval job, two tracebacks
        ({"uncertainty": {"seed": -1}}, "config uncertainty.seed: -1 is less than the minimum of 0"),
        # issue 54: B=1 gave a "95% interval" [0.381, 0.381] that missed its own estimate 0.356
        ({"uncertainty": {"bootstrap": 1}}, "config uncertainty.bootstrap: 1 is less than the minimum of 1000"),
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


def nested_aliases(levels: int = 8) -> str:
    """A few lines of YAML whose aliases nest ``levels`` deep: 9**levels strings once read."""
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, levels)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "where, message",
    [
        ("scoring: {max_length: *a7}", "config scoring.max_length: [[[[[[[['lol', 'lol',"),
        ("wikidata: {date: *a7}", "config wikidata.date: [[[[[[[['lol', 'lol',"),
        ("lpaqa: {lama: {data: *a7}}", "config lpaqa.lama.data: [[[[[[[['lol', 'lol',"),
        ("models: {m: *a7}", "config models.m: [[[[[[[['lol', 'lol',"),
        (f"wikidata: {{date: {'9' * 3000}}}", "config wikidata.date: 999999"),
        (f"wikidata: {{date: '{'x' * 5000}'}}", "config wikidata.date: 'xxxxx"),
    ],
)
def test_a_config_error_quotes_at_most_200_characters_of_a_value(where, message):
    """Issue 44, item 10: a config of 2 KB, nested YAML aliases under one key, was refused after
    seconds of work with a "line" of 152 MB (jsonschema quotes the value at fault whole)."""
    import time

    text = nested_aliases() + where + "\n"
    assert len(text) < 6000
    parsed = yaml.safe_load(text)
    for name in [key for key in parsed if key.startswith("a")]:
        del parsed[name]
    parsed.setdefault("models", {"m": {"kind": "masked", "hub_id": "m"}})
    started = time.monotonic()
    with pytest.raises(KnowprobeError) as error:
        config.validate(parsed)
    line = str(error.value)
    assert line.startswith(message) and "\n" not in line
    assert len(line) < 200 + 120 and "..." in line
    assert time.monotonic() - started < 2.0  # the whole value is never printed, nor walked


def test_quote_keeps_short_values_whole_and_cuts_long_ones():
    assert config.quote({"a": [1, "b"]}) == repr({"a": [1, "b"]})
    assert config.quote("x" * 300) == "'" + "x" * 199 + "..."
    shared = ["y"] * 9
    assert config.quote([shared, shared]) == repr([shared, shared])


def test_wikidata_chunks_and_every_other_count_have_a_maximum():
    """Issue 44, item 10: wikidata.chunks: 1000000000 was taken, and the dry run hung making a
    billion jobs. Every integer key but seeds has a maximum in the schema."""
    with pytest.raises(KnowprobeError, match=r"^config wikidata\.chunks: 1000000000 is greater than the maximum of"):
        config.validate({"models": {"m": {"kind": "masked", "hub_id": "m"}}, "wikidata": {"chunks": 10**9}})
    counts = [
        key
        for key, node in schema_leaves(config._document(config.MAIN_SCHEMA), config.MAIN_SCHEMA)
        if "integer" in (node.get("type") if isinstance(node.get("type"), list) else [node.get("type")])
    ]
    assert len(counts) > 40
    missing = [
        key for key, node in schema_leaves(config._document(config.MAIN_SCHEMA), config.MAIN_SCHEMA)
        if key in counts and not key.endswith("seed") and "maximum" not in node
    ]  # fmt: skip
    assert missing == []
