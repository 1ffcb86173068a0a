"""Synthetic Wikidata JSON dumps with realistic entity sizes, for benchmarks.

Entities look like the real dump's: labels and descriptions in many languages, aliases,
sitelinks, and claims with qualifiers and references; sizes follow a long-tailed
distribution (a median of a few kB, a tail of tens of kB, about 10 kB on average), and most
bytes are fields a parser for knowprobe skips. Lines follow the dump layout: "[", one
entity per line ending in ",", "]".
"""

from __future__ import annotations

import json
import random
from pathlib import Path

LANGUAGES = [
    "en",
    "de",
    "fr",
    "es",
    "it",
    "nl",
    "pl",
    "ru",
    "ja",
    "zh",
    "pt",
    "sv",
    "uk",
    "ca",
    "ar",
    "fa",
    "he",
    "cs",
    "fi",
    "hu",
    "ko",
    "no",
    "da",
    "ro",
    "tr",
    "id",
    "vi",
    "el",
    "bg",
    "sr",
    "hr",
    "sk",
    "sl",
    "et",
    "lv",
    "lt",
    "eu",
    "gl",
    "hy",
    "ka",
    "be",
    "kk",
    "uz",
    "az",
    "ms",
    "th",
    "hi",
    "bn",
    "ta",
    "te",
    "ur",
    "mul",
    "sq",
    "mk",
    "bs",
    "is",
    "ga",
    "cy",
    "lb",
    "af",
    "sw",
    "yo",
    "ha",
    "zu",
    "xh",
    "eo",
    "la",
    "oc",
]
# item-valued properties of the kind knowprobe keeps (LAMA relations, P31, P279, ...)
ITEM_PROPERTIES = [
    "P279",
    "P131",
    "P17",
    "P19",
    "P20",
    "P27",
    "P106",
    "P361",
    "P36",
    "P37",
    "P30",
    "P103",
    "P1412",
    "P69",
    "P108",
    "P463",
    "P101",
    "P136",
    "P1303",
    "P264",
    "P140",
    "P159",
    "P740",
    "P127",
]
# what most statements of real entities are: external identifiers, dates, images, coordinates
OTHER_PROPERTIES = ["P569", "P570", "P18", "P625", "P856", "P373"] + [f"P{n}" for n in range(1000, 1300)]
WORDS = [
    "river",
    "city",
    "county",
    "school",
    "painter",
    "village",
    "album",
    "species",
    "station",
    "church",
    "football",
    "company",
    "island",
    "mountain",
    "novel",
    "film",
    "district",
    "language",
    "museum",
    "road",
]


def _value(rng: random.Random, prop: str) -> dict:
    if prop in ("P569", "P570"):
        return {
            "value": {
                "time": f"+{rng.randint(1000, 2020)}-01-01T00:00:00Z",
                "timezone": 0,
                "before": 0,
                "after": 0,
                "precision": 9,
                "calendarmodel": "http://www.wikidata.org/entity/Q1985727",
            },
            "type": "time",
        }
    if prop in ("P18", "P373", "P856") or prop.startswith("P1") and len(prop) == 5 and prop not in ITEM_PROPERTIES:
        return {"value": f"{rng.getrandbits(40):x}-{rng.choice(WORDS)}", "type": "string"}
    if prop == "P625":
        return {
            "value": {
                "latitude": rng.uniform(-90, 90),
                "longitude": rng.uniform(-180, 180),
                "altitude": None,
                "precision": 0.0001,
                "globe": "http://www.wikidata.org/entity/Q2",
            },
            "type": "globecoordinate",
        }
    number = rng.randint(1, 120_000_000)
    return {"value": {"entity-type": "item", "numeric-id": number, "id": f"Q{number}"}, "type": "wikibase-entityid"}


def _statement(rng: random.Random, qid: str, prop: str) -> dict:
    statement = {
        "mainsnak": {
            "snaktype": "value",
            "property": prop,
            "hash": f"{rng.getrandbits(160):040x}",
            "datavalue": _value(rng, prop),
            "datatype": "wikibase-item",
        },
        "type": "statement",
        "id": f"{qid}${rng.getrandbits(128):032x}",
        "rank": rng.choices(["normal", "preferred", "deprecated"], [90, 8, 2])[0],
    }
    if rng.random() < 0.3:
        statement["qualifiers"] = {
            "P580": [
                {
                    "snaktype": "value",
                    "property": "P580",
                    "hash": f"{rng.getrandbits(160):040x}",
                    "datavalue": _value(rng, "P569"),
                    "datatype": "time",
                }
            ]
        }
        statement["qualifiers-order"] = ["P580"]
    statement["references"] = [
        {
            "hash": f"{rng.getrandbits(160):040x}",
            "snaks": {
                "P248": [
                    {
                        "snaktype": "value",
                        "property": "P248",
                        "datavalue": _value(rng, "P31"),
                        "datatype": "wikibase-item",
                    }
                ],
                "P813": [
                    {"snaktype": "value", "property": "P813", "datavalue": _value(rng, "P569"), "datatype": "time"}
                ],
            },
            "snaks-order": ["P248", "P813"],
        }
        for _ in range(rng.choice([0, 1, 1, 2]))
    ]
    return statement


def entity(rng: random.Random, number: int) -> dict:
    qid = f"Q{number}"
    size = min(rng.lognormvariate(0.0, 0.9), 12.0)  # long tail of popular entities
    n_lang = max(1, min(len(LANGUAGES), int(4 * size)))
    langs = ["en"] + rng.sample(LANGUAGES[1:], n_lang - 1)
    name = f"{rng.choice(WORDS).title()} {number}"
    # about 1 statement in 6 is item-valued and of a kept property, as in the real dump
    props = ["P31"] + rng.sample(ITEM_PROPERTIES, rng.randint(1, 4))
    props += rng.sample(OTHER_PROPERTIES, max(1, min(len(OTHER_PROPERTIES), int(5 * size))))
    claims = {prop: [_statement(rng, qid, prop) for _ in range(rng.choice([1, 1, 1, 2]))] for prop in props}
    return {
        "type": "item",
        "id": qid,
        "labels": {lang: {"language": lang, "value": f"{name} ({lang})"} for lang in langs},
        "descriptions": {
            lang: {"language": lang, "value": f"{rng.choice(WORDS)} in {rng.choice(WORDS)}"}
            for lang in langs[: max(1, len(langs) // 2)]
        },
        "aliases": {
            lang: [{"language": lang, "value": f"{name} alias {k}"} for k in range(rng.choice([1, 2]))]
            for lang in langs[: max(1, len(langs) // 4)]
        },
        "claims": claims,
        "sitelinks": {
            f"{lang}wiki": {"site": f"{lang}wiki", "title": name, "badges": []}
            for lang in langs[: max(1, len(langs) // 3)]
            if lang != "mul"
        },
        "lastrevid": rng.randint(1, 2_000_000_000),
    }


def write_dump(path: str | Path, target_bytes: int, seed: int = 0, level: int = 1) -> dict:
    """Write a .json.gz (or .json) dump of about ``target_bytes`` uncompressed bytes."""
    path = Path(path)
    rng = random.Random(seed)
    if path.suffix == ".gz":
        from isal import igzip

        handle = igzip.open(path, "wb", compresslevel=level)
    else:
        handle = path.open("wb")
    written, count = 0, 0
    with handle:
        handle.write(b"[\n")
        while written < target_bytes:
            count += 1
            line = json.dumps(entity(rng, count), separators=(",", ":")).encode() + b",\n"
            handle.write(line)
            written += len(line)
        handle.write(b"]\n")
    return {"entities": count, "uncompressed_bytes": written + 4}
