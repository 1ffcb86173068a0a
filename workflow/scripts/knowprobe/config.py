"""The config schema: validation that fills in defaults, and the defaults themselves.

The schema lives in ``workflow/schemas``: ``config.schema.yaml`` for what the studies share, and
one file per study (``lpaqa.schema.yaml``, ...) for that study's section, referenced from the
main file. Every default is written there once: the workflow validates its config here, and the
settings classes of the package read their defaults with :func:`schema_defaults`, so a rule and a
test that builds settings by hand agree.

Snakemake's own ``validate`` cannot be used: jsonschema switches back to its plain validator
class inside a ``$ref`` to a document that names its ``$schema``, so defaults in a study's
schema file would never be filled in.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path

import yaml

from .io import KnowprobeError

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schemas"
MAIN_SCHEMA = "config.schema.yaml"


@functools.lru_cache(maxsize=None)  # noqa: UP033 (functools.cache is 3.9+; the fairseq env runs 3.8)
def _document(name: str) -> dict:
    """A schema file's contents without ``$schema`` (the registry states the dialect)."""
    contents = yaml.safe_load((SCHEMA_DIR / name).read_text(encoding="utf-8"))
    contents.pop("$schema", None)
    return contents


@functools.lru_cache(maxsize=None)  # noqa: UP033 (functools.cache is 3.9+; the fairseq env runs 3.8)
def _registry():
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    resources = [
        (path.name, Resource(contents=_document(path.name), specification=DRAFT202012))
        for path in sorted(SCHEMA_DIR.glob("*.schema.yaml"))
    ]
    return Registry().with_resources(resources)


def _filling_defaults(validator_class):
    """A validator class that sets each missing property to a copy of its schema default."""
    from jsonschema import validators

    validate_properties = validator_class.VALIDATORS["properties"]

    def properties(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if "default" in subschema and name not in instance:
                    instance[name] = copy.deepcopy(subschema["default"])
        yield from validate_properties(validator, properties, instance, schema)

    return validators.extend(validator_class, {"properties": properties})


def describe(error) -> str:
    """One line naming the key path and what is wrong with it."""
    path = ".".join(str(part) for part in error.absolute_path)
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        unexpected = sorted(set(error.instance) - set(allowed))
        where = f"{path}." if path else ""
        return f"config {where}{unexpected[0]}: unknown key (allowed here: {', '.join(allowed)})"
    if error.validator == "oneOf":
        return (
            f"config {path}: {error.instance!r} is not any of the allowed forms ({error.schema.get('description', '')})"
        )
    if error.validator in ("type", "pattern") and error.schema.get("pattern") == "^auto$":
        # an integer or auto (batch_size, max_tokens): the schema's "does not match '^auto$'" or
        # "is not of type 'integer', 'string'" named neither form
        minimum = error.schema.get("minimum")
        integer = "an integer" + (f" of at least {minimum}" if minimum is not None else "")
        return f"config {path}: {error.instance!r} is neither {integer} nor auto (expected {integer}, or auto)"
    return f"config {path or '(top level)'}: {error.message}"


def validate(config: dict) -> dict:
    """Check ``config`` against the schema and fill in every default (in place); the first
    problem is a KnowprobeError of one line."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    validator = _filling_defaults(Draft202012Validator)(_document(MAIN_SCHEMA), registry=_registry())
    error = best_match(validator.iter_errors(config))
    if error is not None:
        raise KnowprobeError(describe(error))
    return config


def _resolve(node: dict, document: str) -> tuple[dict, str]:
    """Follow ``$ref`` (to another file or within one) and pick the object form of a ``oneOf``."""
    while True:
        if "$ref" in node:
            target, _, pointer = node["$ref"].partition("#")
            document = target or document
            node = _document(document)
            for part in filter(None, pointer.split("/")):
                node = node[part]
        elif "oneOf" in node:
            node = next(branch for branch in node["oneOf"] if "properties" in branch or "$ref" in branch)
        else:
            return node, document


def schema_defaults(*path: str) -> dict:
    """The defaults of the object at ``path`` (keys of nested objects; ``*`` for any key of a
    mapping such as ``models``), e.g. ``("scoring",)`` or ``("models", "*", "train")``."""
    node, document = _document(MAIN_SCHEMA), MAIN_SCHEMA
    for key in path:
        node, document = _resolve(node, document)
        node = node["additionalProperties"] if key == "*" else node["properties"][key]
    node, document = _resolve(node, document)
    return {name: copy.deepcopy(sub["default"]) for name, sub in node["properties"].items() if "default" in sub}
