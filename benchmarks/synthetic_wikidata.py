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


# --- a coherent world at a fraction of Wikidata's size (benchmarks/rehearsal.py) -------------------
#
# The dump above draws objects at random; the rehearsal needs one whose claims connect: objects
# that are entities of the dump, with labels, so that T-REx-train, LAMA-style test facts, S-TEST's
# reasoning paths and Wikipedia's articles can be built from it, each at its real share.

# Items of the 2025-09-03 dump and, per property the workflow keeps, its claims, the items that
# have it and its distinct objects: QLever counts published by github.com/WikiAr/WikiData-Dumps
# (src/qlever_dumps/props/dumps/to_wikidata/properties.json, commit f7df4a9), which lists the
# ~100 most used item-valued properties. The others (under ~430,000 claims each, so not listed
# there) are estimates, marked as such; P569 (a date) is estimated from the humans with a birth date.
DUMP_ITEMS_2025 = 117_416_494
PROPERTY_CLAIMS_2025 = {
    "P31": 120_307_873,
    "P407": 28_480_136,
    "P17": 19_240_784,
    "P131": 14_203_837,
    "P106": 12_347_324,
    "P27": 5_823_713,
    "P361": 5_226_634,
    "P279": 5_143_728,
    "P276": 4_724_882,
    "P19": 3_701_635,
    "P1412": 3_132_882,
    "P495": 2_875_426,
    "P527": 2_674_316,
    "P136": 2_384_038,
    "P108": 2_285_354,
    "P20": 1_532_899,
    "P39": 1_465_537,
    "P101": 1_298_225,
    "P1001": 1_143_345,
    "P127": 1_117_218,
    "P159": 928_739,
    "P47": 927_631,
    "P463": 653_632,
    "P140": 640_578,
    "P138": 566_728,
    "P937": 531_107,
    "P413": 435_642,
    "P364": 429_547,
}
ESTIMATED_CLAIMS_2025 = {  # not in the list above (fewer claims than its last entry): estimates
    "P569": 7_500_000,
    "P176": 300_000,
    "P1303": 200_000,
    "P264": 150_000,
    "P103": 150_000,
    "P740": 150_000,
    "P178": 100_000,
    "P449": 80_000,
    "P30": 50_000,
    "P190": 30_000,
    "P530": 20_000,
    "P36": 20_000,
    "P37": 10_000,
    "P1376": 10_000,
}
# Shares of items by kind, from the dump's P31 counts (scholarly articles 45.2 M, humans 12.6 M,
# categories 5.7 M, taxa 3.8 M, stars and galaxies 5.4 M; P17 on 19.0 M items, P279 on 4.4 M);
# "other" is the rest. English labels: 90.4 M of 117.4 M items, mul 15.6 M (the same listing's
# langs.json); enwiki sitelinks: about 6.9 M (the articles of the English Wikipedia).
KIND_SHARES = {
    "article": 0.385,
    "human": 0.107,
    "category": 0.049,
    "taxon": 0.032,
    "astro": 0.046,
    "place": 0.125,
    "org": 0.02,
    "work": 0.05,
    "class": 0.037,
    "other": 0.149,
}
SITELINK_SHARE = {  # of each kind with an English Wikipedia article: 6.9 M in all (5.9%)
    "article": 0.0,
    "human": 0.16,
    "category": 0.0,
    "taxon": 0.05,
    "astro": 0.005,
    "place": 0.12,
    "org": 0.2,
    "work": 0.25,
    "class": 0.03,
    "other": 0.02,
    "admin": 0.9,
    "concept": 0.9,
}
SINGLE_WORD_SHARE = {  # labels of one word (T-REx-train takes only those for subject and object)
    "article": 0.0,
    "human": 0.08,
    "category": 0.0,
    "taxon": 0.05,
    "astro": 0.0,
    "place": 0.6,
    "org": 0.25,
    "work": 0.3,
    "class": 0.4,
    "other": 0.2,
    "admin": 0.7,
    "concept": 0.9,
}
# Concept pools: the items many claims point to, at their distinct-object counts in the dump
# (scaled, with a floor: a world of 0.25% still has countries); countries and the like are fixed.
POOL_SIZES = {
    "country": (200, 200),
    "continent": (7, 7),
    "language": (300, 300),
    "religion": (2_337, 40),
    "genre": (12_334, 100),
    "instrument": (2_000, 40),
    "field": (43_860, 200),
    "position": (137_162, 200),
    "position_played": (410, 410),
    "type": (107_839, 300),
}
ADMIN_UNITS_2025 = 452_523  # distinct objects of P131: regions, districts, municipalities
OCCUPATIONS_2025 = 22_091  # distinct objects of P106, which are classes (P279 chains)


class World:
    """Entities of a Wikidata-like world of ``scale`` times the 2025 dump's items, with their kinds,
    labels, sitelinks and claims of the workflow's properties, each property with its share of
    claims. Entity numbers are 1..n (``Q<number>``); arrays are indexed by number - 1.

    Structure where the studies read it: places lie in municipalities, districts and regions
    (P131, some with a second parent one level up, a few back edges); classes and occupations in
    P279 trees whose fan-out follows a preferential draw; parts in wholes (P361) likewise;
    people are born in municipalities, hold occupations and citizenships; the popular objects of
    a property take most of its claims (a Zipf draw), as countries and languages do."""

    KINDS = list(KIND_SHARES) + ["admin", "concept"]

    def __init__(self, scale: float, seed: int = 0):
        import numpy as np

        self.scale, self.rng = scale, np.random.default_rng(seed)
        rng = self.rng
        pools = {
            name: max(floor, round(full * scale)) if full != floor else full
            for name, (full, floor) in POOL_SIZES.items()
        }
        admin = max(60, round(ADMIN_UNITS_2025 * scale))
        concept_count = sum(pools.values())
        n = max(round(DUMP_ITEMS_2025 * scale), admin + concept_count + 1000)
        self.n = n
        # concepts and admin units first (low numbers, as old items have), then the rest shuffled
        kinds = np.empty(n, dtype=np.int8)
        kind_index = {name: i for i, name in enumerate(self.KINDS)}
        kinds[:concept_count] = kind_index["concept"]
        kinds[concept_count : concept_count + admin] = kind_index["admin"]
        rest = n - concept_count - admin
        shares = np.array(list(KIND_SHARES.values()))
        counts = np.floor(shares / shares.sum() * rest).astype(np.int64)
        counts[-1] += rest - counts.sum()
        kinds[concept_count + admin :] = rng.permutation(np.repeat(np.arange(len(KIND_SHARES), dtype=np.int8), counts))
        self.kinds = kinds
        self.kind_index = kind_index
        numbers = np.arange(1, n + 1)
        self.members = {name: numbers[kinds == i] for name, i in kind_index.items()}
        start, self.pools = 0, {}
        for name, size in pools.items():
            self.pools[name] = numbers[start : start + size]
            start += size
        units = self.members["admin"]
        self.regions = units[: max(10, len(units) // 20)]
        self.districts = units[len(self.regions) : len(self.regions) + max(20, len(units) // 4)]
        self.municipalities = units[len(self.regions) + len(self.districts) :]
        classes = self.members["class"]
        self.occupations = classes[: max(300, min(len(classes) // 2, round(OCCUPATIONS_2025 * scale * 10)))]
        self._labels()
        self._claims()

    # --- labels -------------------------------------------------------------------------------

    def _labels(self) -> None:
        import numpy as np

        rng = self.rng
        kind_names = np.array(self.KINDS)[self.kinds]
        single = rng.random(self.n) < np.vectorize(SINGLE_WORD_SHARE.get)(kind_names)
        self.sitelink = rng.random(self.n) < np.vectorize(SITELINK_SHARE.get)(kind_names)
        # 77% of items have an English label, 13% only a mul one, the rest neither (their claims
        # stay, as the parser keeps claims of unlabelled items); concepts and admin units all have one
        language = rng.choice(3, size=self.n, p=[0.77, 0.13, 0.10]).astype(np.int8)
        language[(self.kinds == self.kind_index["concept"]) | (self.kinds == self.kind_index["admin"])] = 0
        language[self.sitelink & (language == 2)] = 0
        self.label_language = language  # 0 en, 1 mul, 2 none
        words = WorldWords(seed=int(rng.integers(1 << 30)))
        self.labels = [
            words.one(number) if single[number - 1] else words.several(number, self.KINDS[self.kinds[number - 1]])
            for number in range(1, self.n + 1)
        ]
        self.single_word = single

    def label(self, number: int) -> str:
        return self.labels[number - 1]

    # --- claims -------------------------------------------------------------------------------

    def _zipf(self, pool, size: int, exponent: float = 1.0):
        """``size`` draws from ``pool``, its first members the most popular (weight 1/rank**exponent)."""
        import numpy as np

        weights = 1.0 / np.arange(1, len(pool) + 1) ** exponent
        return np.asarray(pool)[self.rng.choice(len(pool), size=size, p=weights / weights.sum())]

    def _carriers(self, kinds_weights: dict[str, float], claims: int):
        """Subjects of ``claims`` claims of a property spread over kinds of items (by weight)."""
        import numpy as np

        groups = [self.members[kind] if kind in self.members else self.pools[kind] for kind in kinds_weights]
        weights = np.array(list(kinds_weights.values()), dtype=float)
        counts = self.rng.multinomial(max(claims, 0), weights / weights.sum())
        out = [self.rng.choice(members, size=k, replace=True) for members, k in zip(groups, counts) if k]
        return np.concatenate(out) if out else np.empty(0, dtype=np.int64)

    def _tree_parents(self, members, fan: float, second: float):
        """Parents for ranked members: each rank r > 0 points to a member of rank below r * fan
        (a preferential draw: low ranks gather many children), some to a second one."""
        import numpy as np

        members = np.asarray(members)
        ranks = np.arange(1, len(members))
        parents = members[(self.rng.random(len(ranks)) * np.maximum(1, ranks * fan)).astype(np.int64)]
        subjects = members[1:]
        again = self.rng.random(len(subjects)) < second
        parents2 = members[
            (self.rng.random(int(again.sum())) * np.maximum(1, ranks[again] * fan * fan)).astype(np.int64)
        ]
        return np.concatenate([subjects, subjects[again]]), np.concatenate([parents, parents2])

    def _claims(self) -> None:
        import numpy as np

        f, rng = self.scale, self.rng
        claims: dict[str, list] = {}

        def add(prop, subjects, objects):
            subjects, objects = np.asarray(subjects, dtype=np.int64), np.asarray(objects, dtype=np.int64)
            keep = subjects != objects
            claims.setdefault(prop, []).append((subjects[keep], objects[keep]))

        def total(prop):
            return round((PROPERTY_CLAIMS_2025.get(prop) or ESTIMATED_CLAIMS_2025[prop]) * f)

        pools, people = self.pools, self.members["human"]
        # P31: every item, its kind's types (scholarly article, human, ...) the most common
        types = pools["type"]
        for i, kind in enumerate(self.KINDS):
            members = self.members[kind]
            if kind == "concept":
                members = members[len(types) :]
            add(
                "P31",
                members,
                self._zipf(types[i * 20 : i * 20 + 20] if i * 20 + 20 <= len(types) else types, len(members), 2.0),
            )
        extra = total("P31") - len(np.concatenate([s for s, _ in claims["P31"]]))
        if extra > 0:
            add("P31", rng.choice(np.arange(1, self.n + 1), extra), self._zipf(types, extra))
        # administrative units: municipality -> district -> region -> country (P131 and P17)
        regions, districts, municipalities = self.regions, self.districts, self.municipalities
        countries = pools["country"]
        region_country = self._zipf(countries, len(regions))
        add("P131", regions, region_country)
        district_region = rng.choice(regions, len(districts))
        add("P131", districts, district_region)
        municipality_district = rng.choice(districts, len(municipalities))
        add("P131", municipalities, municipality_district)
        # 5% of municipalities lie in a second unit one level up; a few back edges make cycles
        second = municipalities[rng.random(len(municipalities)) < 0.05]
        add("P131", second, rng.choice(regions, len(second)))
        back = regions[: max(1, len(regions) // 1000)]
        add("P131", back, rng.choice(municipalities, len(back)))
        country_of = dict(zip(regions.tolist(), region_country.tolist()))
        district_country = np.array([country_of[r] for r in district_region.tolist()])
        district_of = dict(zip(districts.tolist(), district_country.tolist()))
        add("P17", regions, region_country)
        add("P17", districts, district_country)
        add("P17", municipalities, [district_of[d] for d in municipality_district.tolist()])
        add("P47", *self._neighbours(regions, total("P47") // 3))
        add("P47", *self._neighbours(districts, total("P47") // 3))
        add("P47", *self._neighbours(municipalities, total("P47") // 3))
        # places: most in a municipality (Zipf: big towns hold many places), all in a country
        places = self.members["place"]
        remaining = max(0, total("P131") - sum(len(s) for s, _ in claims["P131"]))
        add("P131", rng.choice(places, remaining), self._zipf(municipalities, remaining, 0.8))
        p17 = total("P17") - sum(len(s) for s, _ in claims["P17"])
        add(
            "P17",
            self._carriers({"place": 0.75, "org": 0.12, "work": 0.08, "other": 0.05}, p17),
            self._zipf(countries, max(p17, 0)),
        )
        # classes and occupations: P279 trees; parts in wholes (P361)
        classes = self.members["class"]
        subjects, parents = self._tree_parents(classes, fan=0.07, second=0.17)
        add("P279", subjects[: total("P279")], parents[: total("P279")])
        wholes = self.members["other"][: max(100, round(567_658 * f))]
        whole_subjects, whole_parents = self._tree_parents(wholes, fan=0.15, second=0.05)
        add("P361", whole_subjects, whole_parents)
        parts = total("P361") - len(whole_subjects)
        add(
            "P361",
            self._carriers({"astro": 0.4, "work": 0.2, "other": 0.3, "place": 0.1}, parts),
            self._zipf(wholes, max(parts, 0), 0.9),
        )
        # people
        municipalities_zipf = lambda k: self._zipf(municipalities, k, 0.9)  # noqa: E731
        for prop, pool in [
            ("P106", self.occupations),
            ("P27", countries),
            ("P19", municipalities),
            ("P20", municipalities),
            ("P937", municipalities),
            ("P1412", pools["language"]),
            ("P103", pools["language"]),
            ("P108", self.members["org"]),
            ("P39", pools["position"]),
            ("P140", pools["religion"]),
            ("P413", pools["position_played"]),
            ("P1303", pools["instrument"]),
        ]:
            k = total(prop)
            objects = municipalities_zipf(k) if pool is municipalities else self._zipf(pool, k)
            add(prop, rng.choice(people, k), objects)
        for prop, carriers, pool in [
            ("P463", {"human": 0.7, "org": 0.3}, "org"),
            ("P101", {"human": 0.8, "org": 0.2}, "field"),
            ("P136", {"work": 0.8, "human": 0.2}, "genre"),
            ("P264", {"human": 0.6, "work": 0.4}, "org"),
            ("P495", {"work": 1.0}, "country"),
            ("P364", {"work": 1.0}, "language"),
            ("P407", {"article": 0.9, "work": 0.1}, "language"),
            ("P449", {"work": 1.0}, "org"),
            ("P176", {"work": 0.5, "other": 0.5}, "org"),
            ("P178", {"work": 1.0}, "org"),
            ("P127", {"org": 0.6, "place": 0.4}, "org"),
            ("P159", {"org": 1.0}, "municipality"),
            ("P740", {"org": 1.0}, "municipality"),
            ("P1001", {"other": 1.0}, "country"),
            ("P138", {"place": 0.4, "org": 0.2, "other": 0.4}, "human"),
            ("P276", {"other": 0.6, "work": 0.2, "org": 0.2}, "place"),
            ("P527", {"work": 0.4, "other": 0.4, "class": 0.2}, "other"),
            ("P30", {"country": 0.1, "place": 0.9}, "continent"),
        ]:
            k = total(prop)
            if pool == "municipality":
                objects = municipalities_zipf(k)
            elif pool in self.members:
                objects = self._zipf(self.members[pool], k, 0.9)
            else:
                objects = self._zipf(pools[pool], k)
            add(prop, self._carriers(carriers, k), objects)
        add("P530", *self._neighbours(countries, total("P530")))
        add("P190", *self._neighbours(municipalities, total("P190")))
        capitals = rng.choice(municipalities, len(countries) + len(regions))
        add("P36", np.concatenate([countries, regions]), capitals)
        add("P1376", capitals, np.concatenate([countries, regions]))
        add(
            "P37",
            np.concatenate([countries, regions[: len(regions) // 4]]),
            self._zipf(pools["language"], len(countries) + len(regions) // 4),
        )
        self.claims = {prop: tuple(np.concatenate(part) for part in zip(*pieces)) for prop, pieces in claims.items()}
        # dates of birth (P569): the year, on about 60% of people
        born = people[rng.random(len(people)) < min(1.0, total("P569") / max(1, len(people)))]
        self.birth_years = dict(zip(born.tolist(), rng.integers(1700, 2010, len(born)).tolist()))
        self._index()

    def _neighbours(self, members, claims: int):
        """Pairs of members as a symmetric relation (shares border with, twinned with)."""
        import numpy as np

        members = np.asarray(members)
        if len(members) < 2 or claims < 2:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        a = self.rng.choice(members, claims // 2)
        b = self.rng.choice(members, claims // 2)
        return np.concatenate([a, b]), np.concatenate([b, a])

    def _index(self) -> None:
        """All claims sorted by subject (then property), for one slice per entity."""
        import numpy as np

        self.properties = sorted(self.claims)
        subjects = np.concatenate([self.claims[p][0] for p in self.properties])
        props = np.concatenate([np.full(len(self.claims[p][0]), i, np.int16) for i, p in enumerate(self.properties)])
        objects = np.concatenate([self.claims[p][1] for p in self.properties])
        order = np.lexsort((props, subjects))
        self.subjects, self.props, self.objects = subjects[order], props[order], objects[order]
        self.starts = np.searchsorted(self.subjects, np.arange(1, self.n + 2))

    def claims_of(self, number: int) -> dict[str, list[int]]:
        """The entity's claims of the workflow's properties: property → objects."""
        lo, hi = self.starts[number - 1], self.starts[number]
        out: dict[str, list[int]] = {}
        for prop, target in zip(self.props[lo:hi].tolist(), self.objects[lo:hi].tolist()):
            out.setdefault(self.properties[prop], []).append(target)
        return out

    def claim_count(self) -> int:
        return sum(len(s) for s, _ in self.claims.values()) + len(self.birth_years)

    # --- the dump -----------------------------------------------------------------------------

    def entity(self, rng: random.Random, number: int) -> dict:
        """Entity ``number`` in the dump's JSON layout: its label, aliases, sitelink and claims of
        the world, and (what most of a real entity's bytes are) labels and descriptions in other
        languages and statements of properties the workflow skips, as ``entity`` writes them."""
        filler = entity(rng, number)
        label = self.label(number)
        language = int(self.label_language[number - 1])
        labels = {lang: value for lang, value in filler["labels"].items() if lang not in ("en", "mul")}
        if language < 2:
            code = ("en", "mul")[language]
            labels[code] = {"language": code, "value": label}
        aliases = {lang: value for lang, value in filler["aliases"].items() if lang not in ("en", "mul")}
        if language == 0 and rng.random() < 0.15:
            aliases["en"] = [{"language": "en", "value": f"{label} {WorldWords.SUFFIXES[number % 7]}"}]
        sitelinks = {site: value for site, value in filler["sitelinks"].items() if site != "enwiki"}
        if self.sitelink[number - 1]:
            sitelinks["enwiki"] = {"site": "enwiki", "title": self.title(number), "badges": []}
        claims = {
            prop: statements
            for prop, statements in filler["claims"].items()
            if prop not in self.claims and prop != "P569"
        }
        for prop, objects in self.claims_of(number).items():
            claims[prop] = [_item_statement(rng, number, prop, target) for target in objects]
        if number in self.birth_years:
            claims["P569"] = [_time_statement(rng, number, self.birth_years[number])]
        filler.update(labels=labels, aliases=aliases, sitelinks=sitelinks, claims=claims)
        return filler

    def title(self, number: int) -> str:
        """The enwiki title of an item with a sitelink: its label, with the number to tell
        items of one label apart (as "Paris (Texas)" is told from "Paris")."""
        label = self.label(number)
        return label if self.labels_unique(label) else f"{label} ({number})"

    def labels_unique(self, label: str) -> bool:
        if not hasattr(self, "_label_counts"):
            from collections import Counter

            self._label_counts = Counter(self.labels)
        return self._label_counts[label] == 1


class WorldWords:
    """Invented names for the world's items: one-word names from syllables (distinct for the
    items that need to be told apart, as candidate words are), several-word names by kind."""

    SYLLABLES = [c + v + e for c in "bcdfghklmnprstvz" for v in "aeiou" for e in ("", "n", "r", "s", "l")]
    SUFFIXES = ["City", "River", "Hall", "House", "Park", "Group", "Square"]
    KIND_WORDS = {
        "article": ["Study", "Analysis", "Effects", "Structure", "Evidence", "Review"],
        "human": [],
        "category": ["Category"],
        "taxon": [],
        "astro": ["HD", "Gliese", "NGC", "Kepler"],
        "work": ["The", "Album", "Film", "Songs", "Tales"],
        "org": ["Company", "University", "Club", "Institute", "Records"],
    }

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)

    def word(self, number: int) -> str:
        """A word of two to four syllables, one per number (the number spelled in syllables after
        a random first one, so that words of distinct numbers differ)."""
        syllables, digits = self.SYLLABLES, []
        while True:
            number, digit = divmod(number, len(syllables))
            digits.append(syllables[digit])
            if not number:
                break
        return (self.rng.choice(syllables) + "".join(reversed(digits))).title()

    def one(self, number: int) -> str:
        return self.word(number)

    def several(self, number: int, kind: str) -> str:
        words = self.KIND_WORDS.get(kind, [])
        second = self.word(self.rng.randrange(1, 10**6))
        if kind == "astro":
            return f"{self.rng.choice(words)} {number}"
        if kind in ("human", "taxon", "place", "class", "other", "admin", "concept") or not words:
            return f"{self.word(number)} {second}"
        return f"{self.rng.choice(words)} {self.word(number)} {second}"


def _item_statement(rng: random.Random, number: int, prop: str, target: int) -> dict:
    statement = _statement(rng, f"Q{number}", prop)
    statement["mainsnak"]["datavalue"] = {
        "value": {"entity-type": "item", "numeric-id": target, "id": f"Q{target}"},
        "type": "wikibase-entityid",
    }
    if statement["rank"] == "deprecated" and rng.random() < 0.5:
        statement["rank"] = "normal"  # about 1% of statements are deprecated, as in the dump
    return statement


def _time_statement(rng: random.Random, number: int, year: int) -> dict:
    statement = _statement(rng, f"Q{number}", "P569")
    statement["mainsnak"]["datavalue"] = {
        "value": {
            "time": f"+{year:04d}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T00:00:00Z",
            "timezone": 0,
            "before": 0,
            "after": 0,
            "precision": rng.choice([9, 11, 11, 11]),
            "calendarmodel": "http://www.wikidata.org/entity/Q1985727",
        },
        "type": "time",
    }
    statement["mainsnak"]["datatype"] = "time"
    return statement


_WORLD: World | None = None  # the world the writer's forked workers read


def _world_lines(task: tuple[int, int, int]) -> bytes:
    start, stop, seed = task
    rng = random.Random(seed)
    return b"".join(
        json.dumps(_WORLD.entity(rng, number), separators=(",", ":")).encode() + b",\n" for number in range(start, stop)
    )


def write_world_dump(
    world: World, path: str | Path, processes: int = 1, repeated: float = 1e-5, level: int = 1
) -> dict:
    """The world's entities as a .json.gz dump in the dump's layout (one gzip member, as
    Wikimedia's), written by ``processes`` forked workers in blocks; a ``repeated`` share of the
    entities is listed a second time further on (a dump made while items were edited may list an
    item twice, which the gather keeps once)."""
    import multiprocessing

    from isal import igzip

    global _WORLD
    _WORLD = world
    path = Path(path)
    block = 2000
    tasks = [(start, min(start + block, world.n + 1), start) for start in range(1, world.n + 1, block)]
    again = random.Random(1).sample(range(1, world.n + 1), max(1, int(world.n * repeated)))
    written = 4
    context = multiprocessing.get_context("fork")
    with igzip.open(path, "wb", compresslevel=level) as handle, context.Pool(processes) as pool:
        handle.write(b"[\n")
        for lines in pool.imap(_world_lines, tasks):
            handle.write(lines)
            written += len(lines)
        rng = random.Random(2)
        for number in sorted(again):
            line = json.dumps(world.entity(rng, number), separators=(",", ":")).encode() + b",\n"
            handle.write(line)
            written += len(line)
        handle.write(b"]\n")
    return {"entities": world.n, "repeated_entities": len(again), "uncompressed_bytes": written}
