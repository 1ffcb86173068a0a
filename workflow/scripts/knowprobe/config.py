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


QUOTE_LIMIT = 200  # the most characters of a value that a config error quotes


def _repr_pieces(value, seen: frozenset = frozenset()):
    """``repr(value)`` in pieces, made as they are taken: a quote stops after its first characters
    without walking the rest (a few lines of nested YAML aliases make a value of millions of items)."""
    if isinstance(value, dict) or isinstance(value, list):
        if id(value) in seen:
            yield "[...]" if isinstance(value, list) else "{...}"
            return
        seen = seen | {id(value)}
        opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
        yield opening
        items = value.items() if isinstance(value, dict) else ((None, item) for item in value)
        for number, (key, item) in enumerate(items):
            if number:
                yield ", "
            if isinstance(value, dict):
                yield from _repr_pieces(key, seen)
                yield ": "
            yield from _repr_pieces(item, seen)
        yield closing
    elif isinstance(value, str) and len(value) > QUOTE_LIMIT:
        yield str.__repr__(value[: QUOTE_LIMIT + 1])[:-1]  # the opening of a long string, unclosed
    elif type(value) is int or isinstance(value, str):
        yield (str.__repr__ if isinstance(value, str) else int.__repr__)(value)
    else:
        yield repr(value)


def quote(value, limit: int = QUOTE_LIMIT) -> str:
    """``repr(value)``, or its first ``limit`` characters and "..." where it is longer; never
    more work than those characters take."""
    text = ""
    for piece in _repr_pieces(value):
        text += piece
        if len(text) > limit:
            return text[:limit] + "..."
    return text


def clip(text: str, limit: int = QUOTE_LIMIT) -> str:
    """A text a message shows as it is (a path, a URL): its first ``limit`` characters, then "..."."""
    text = str(text)
    return text if len(text) <= limit else text[:limit] + "..."


class _QuotedDict(dict):
    def __repr__(self):
        return quote(self)


class _QuotedList(list):
    def __repr__(self):
        return quote(self)


class _QuotedStr(str):
    def __repr__(self):
        return quote(str(self))


class _QuotedInt(int):
    def __repr__(self):
        return quote(int(self))


def _quoted(value, memo: dict):
    """A copy of a parsed config whose values print as :func:`quote` prints them, for jsonschema's
    messages (which hold ``repr`` of the value at fault, whatever its size). Objects that YAML
    aliases share stay shared in the copy, so it costs what the file's text does."""
    if id(value) in memo:
        return memo[id(value)]
    if isinstance(value, dict):
        copied = memo[id(value)] = _QuotedDict()
        for key, item in value.items():
            copied[_quoted(key, memo)] = _quoted(item, memo)
        return copied
    if isinstance(value, list):
        copied = memo[id(value)] = _QuotedList()
        copied.extend(_quoted(item, memo) for item in value)
        return copied
    if isinstance(value, str) and len(value) > QUOTE_LIMIT:
        return _QuotedStr(value)
    if type(value) is int and abs(value) >= 10**QUOTE_LIMIT:
        return _QuotedInt(value)
    return value


def describe(error) -> str:
    """One line naming the key path and what is wrong with it; a value is quoted by its first
    QUOTE_LIMIT characters at most."""
    path = ".".join(str(part)[:QUOTE_LIMIT] for part in error.absolute_path)
    if error.validator == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        unexpected = sorted(set(error.instance) - set(allowed))
        where = f"{path}." if path else ""
        return f"config {where}{unexpected[0][:QUOTE_LIMIT]}: unknown key (allowed here: {', '.join(allowed)})"
    if error.validator == "oneOf":
        return (
            f"config {path}: {quote(error.instance)} is not any of the allowed forms "
            f"({error.schema.get('description', '')})"
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
    problem is a KnowprobeError of one line.

    Errors are looked for in a copy whose values print short (jsonschema's messages quote the
    value at fault whole: a few lines of nested YAML aliases printed a "line" of 152 MB, after
    seconds of work); a config without errors is then validated in place, which fills in the
    defaults."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    validator = _filling_defaults(Draft202012Validator)(_document(MAIN_SCHEMA), registry=_registry())
    error = best_match(validator.iter_errors(_quoted(config, {})))
    if error is not None:
        raise KnowprobeError(describe(error))
    validator.validate(config)
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
