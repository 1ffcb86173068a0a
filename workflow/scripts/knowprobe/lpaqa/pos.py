"""Part-of-speech patterns of prompts (LPAQA Table 11 and Figure 4): ReVerb's three relational
phrase patterns (Fader et al., 2011) over the words between the two slots of a prompt.

    V       x/y V y/x          V = verb particle? adv?
    V P     x/y V P y/x        W = (noun | adj | adv | pron | det)
    V W* P  x/y V W* P y/x     P = (prep | particle | inf. marker)

ReVerb merges adjacent matches into one phrase, so an auxiliary chain ("was born") is read as one
V here. Words are tagged with Universal POS tags: by a spaCy pipeline on the prompt with its slots
filled by a placeholder subject and object, or from a word → tag lexicon (the offline demo's).
"""

from __future__ import annotations

import re

import pandas as pd

from ..prompts import OBJECT, SUBJECT

PATTERNS = {
    "V": "x/y V y/x",
    "V P": "x/y V P y/x",
    "V W* P": "x/y V W* P y/x",
}
OTHER = "other"
# Universal POS tag -> ReVerb class: V(erb), W(ord), A(dverb: in both V and W), P(reposition),
# T (particle: in both V and P; UD tags the infinitive marker "to" PART)
CLASS_OF = {
    "VERB": "V",
    "AUX": "V",
    "NOUN": "W",
    "PROPN": "W",
    "ADJ": "W",
    "PRON": "W",
    "DET": "W",
    "NUM": "W",
    "ADV": "A",
    "ADP": "P",
    "PART": "T",
    "SCONJ": "P",
}
_V, _W, _P = "V+T?A?", "[WA]", "[PT]"
REGEX = {
    "V": re.compile(f"^{_V}$"),
    "V P": re.compile(f"^{_V}{_P}$"),
    "V W* P": re.compile(f"^{_V}{_W}*{_P}$"),
}
# what fills the slots when a pipeline tags a prompt
PLACEHOLDERS = {SUBJECT: "Alice", OBJECT: "Paris"}


def middle_words(template: str) -> list[str]:
    """The words between the two slots."""
    first, second = sorted((template.index(SUBJECT), template.index(OBJECT)))
    # words and punctuation apart, a clitic whole: "[Y]'s [X]" -> ["'s"], "Florence, speaking" -> 3
    return re.findall(r"'\w+|\w+(?:[-'’]\w+)*|[^\w\s]", template[first + len(SUBJECT) : second])


def pattern_of(tags: list[str]) -> str:
    """The ReVerb pattern the middle words' UD tags match, or "other". Where two match (a verb
    and a particle, "came to", is V with its particle or V P), the one ending in P is taken:
    the word before the object links it, as the preposition of V P does."""
    classes = "".join(CLASS_OF.get(tag, "?") for tag in tags)
    return next((name for name in ("V P", "V W* P", "V") if REGEX[name].match(classes)), OTHER)


def tag_with_lexicon(words: list[str], lexicon: dict[str, str]) -> list[str]:
    return [lexicon.get(word, lexicon.get(word.lower(), "X")) for word in words]


def tag_with_pipeline(templates: list[str], nlp) -> list[list[str]]:
    """UD tags of each template's middle words, by a spaCy pipeline on the filled template."""
    tags = []
    for template, doc in zip(templates, nlp.pipe(fill_placeholders(t) for t in templates)):
        first, second = sorted((template.index(SUBJECT), template.index(OBJECT)))
        start = len(fill_placeholders(template[:first])) + len(PLACEHOLDERS[template[first : first + 3]])
        end = start + len(template[first + len(SUBJECT) : second])
        tags.append([token.pos_ for token in doc if start <= token.idx < end and not token.is_space])
    return tags


def fill_placeholders(text: str) -> str:
    return text.replace(SUBJECT, PLACEHOLDERS[SUBJECT]).replace(OBJECT, PLACEHOLDERS[OBJECT])


def read_lexicon(path) -> dict[str, str]:
    """A word → UD tag lexicon: one ``word<TAB>TAG`` a line."""
    from ..io import KnowprobeError

    lexicon = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 2 or parts[1] not in {*CLASS_OF, "PUNCT", "CCONJ", "INTJ", "SYM", "X"}:
                raise KnowprobeError(f"{path}:{number}: expected 'word<TAB>UD tag', got {line.strip()!r}")
            lexicon[parts[0]] = parts[1]
    return lexicon


def tag_prompts(prompts: pd.DataFrame, nlp=None, lexicon: dict[str, str] | None = None) -> pd.DataFrame:
    """``relation, template, middle, tags, pattern`` of every prompt."""
    templates = prompts["template"].tolist()
    middles = [middle_words(t) for t in templates]
    if nlp is not None:
        tags = tag_with_pipeline(templates, nlp)
    else:
        tags = [tag_with_lexicon(words, lexicon or {}) for words in middles]
    return pd.DataFrame(
        {
            "relation": prompts["relation"].to_numpy(),
            "template": templates,
            "middle": [" ".join(words) for words in middles],
            "tags": [" ".join(t) for t in tags],
            "pattern": [pattern_of(t) for t in tags],
        }
    )
