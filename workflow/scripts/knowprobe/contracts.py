"""Data contracts: the Arrow schema of every Parquet table that rules pass to each other.

Writers cast to the contract (:func:`write`, :class:`PartWriter`), so a table's columns and
types never depend on how pandas happened to build it; readers check it (:func:`read`,
:func:`check`), so a file from another version, or not a table of that kind at all, is one line
naming the file and the column. The contract's name and version travel in the Parquet metadata.
Every table these writers write also has its SHA-256 recorded beside it (``PATH.sha256``,
:func:`knowprobe.io.record_digest`) and says so in its metadata (``knowprobe.digest``); the
readers verify it, so a table damaged between rules is one line naming it, never other numbers.
``docs/contracts.md`` is generated from this module (``python -m knowprobe.contracts``) and a
test holds it, and the demo's outputs, to these schemas.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .io import (
    PARQUET_ROW_GROUP,
    KnowprobeError,
    atomic_path,
    digest_path,
    disk_full_error,
    is_disk_full,
    record_digest,
    verify_digest,
)

VERSION = "1"  # raised when a contract changes in a way old files cannot be read as


@dataclass(frozen=True)
class Contract:
    name: str
    description: str
    paths: tuple[str, ...]  # where the workflow writes such tables (globs, relative to the project)
    schema: pa.Schema
    unique: tuple[str, ...] = ()  # columns whose values the contract holds unique within a table

    @property
    def columns(self) -> list[str]:
        return self.schema.names

    def arrow_schema(self, digest: bool = False) -> pa.Schema:
        """The schema with the contract's name and version in its metadata, as files carry it;
        ``digest``: also the mark of a file whose SHA-256 is recorded beside it."""
        metadata = {"knowprobe.contract": self.name, "knowprobe.version": VERSION}
        return self.schema.with_metadata({**metadata, **DIGESTED} if digest else metadata)


# a table's metadata entry saying that its SHA-256 lies beside it (knowprobe.io.record_digest)
DIGESTED = {"knowprobe.digest": "sha256"}


def column(name: str, type_: pa.DataType, doc: str) -> pa.Field:
    return pa.field(name, type_, metadata={"doc": doc})


def contract(
    name: str, description: str, paths: tuple[str, ...], *fields: pa.Field, unique: tuple[str, ...] = ()
) -> Contract:
    return Contract(name, description, paths, pa.schema(list(fields)), unique)


_FACT_FIELDS = (
    column("relation", pa.string(), "relation id: a Wikidata property (P19) or a Google-RE relation (place_of_birth)"),
    column("fact_id", pa.string(), "unique within the table: LAMA's uuid, or relation-subject-object"),
    column("sub_uri", pa.string(), "subject's Wikidata id (or Freebase id in Google-RE)"),
    column("sub_label", pa.string(), "subject's label, put in [X]"),
    column("obj_uri", pa.string(), "object's Wikidata id (or Freebase id)"),
    column("obj_label", pa.string(), "object's label, the answer"),
    column("origin", pa.string(), "lama-trex, lama-google-re, wikidata, lpaqa or xfactr"),
    column("judgments_yes", pa.int64(), "Google-RE raters who judged the fact supported (0 elsewhere)"),
    column("judgments_no", pa.int64(), "Google-RE raters who did not"),
)

FACTS = contract(
    "facts",
    "Facts of one dataset and split, as imported (nothing filtered).",
    ("results/lpaqa/facts/*/*.parquet",),
    *_FACT_FIELDS,
    unique=("fact_id",),
)
MODEL_FACTS = contract(
    "model_facts",
    "The facts one model is probed on: those LAMA's filter keeps for it.",
    ("results/lpaqa/filtered/*/*/*.parquet",),
    *_FACT_FIELDS,
    column("obj_token_id", pa.int64(), "the object's single word-initial token id in this model"),
    unique=("fact_id",),
)
MULTITOKEN_FACTS = contract(
    "multitoken_facts",
    "Facts of LAMA's T-REx relations from the Wikidata dump whose labels may be several words and "
    "tokens (issue 41): T-REx-train's filters less the one-word and single-token ones, no subject "
    "of the relation's LAMA test facts, at most lpaqa.multitoken.per_relation a relation (a seeded "
    "draw); beside it dropped.csv, the pairs left out per relation and reason, and object_tokens/, "
    "each model's token counts of the objects.",
    ("results/lpaqa/multitoken/facts.parquet",),
    *_FACT_FIELDS,
    column("sub_aliases", pa.list_(pa.string()), "the subject's English (or mul) aliases from the dump"),
    column("obj_aliases", pa.list_(pa.string()), "the object's English (or mul) aliases (none for a year)"),
    unique=("fact_id",),
)
OBJECT_TOKENS = contract(
    "object_tokens",
    "Per multi-token fact and probed model, the number of tokens of the object's label as it sits "
    "after a space in a statement (' ' + label, no special tokens; WordPiece drops the space). One "
    "file a model (one job each: adding a model touches no other), in the long layout, one row per "
    "fact and model, so that the tables read them concatenated.",
    ("results/lpaqa/multitoken/object_tokens/*.parquet",),
    column("relation", pa.string(), "relation id"),
    column("fact_id", pa.string(), "the fact (multitoken_facts)"),
    column("model", pa.string(), "the model's name in the config's models"),
    column("obj_tokens", pa.int32(), "tokens of the object's label in the model's tokenizer"),
)
MULTITOKEN_PREDICTIONS = contract(
    "multitoken_predictions",
    "A model's answers to the multi-token facts (issue 41), one row per (fact, template, method): "
    "the facts' train half asked with every template of the configured prompt sets, the test half "
    "with each set's Top-1 template (multitoken_selection); each answer judged against the gold "
    "label and its aliases.",
    ("results/lpaqa/multitoken/predictions/*.parquet",),
    column("relation", pa.string(), "relation id"),
    column("fact_id", pa.string(), "the fact (multitoken_facts)"),
    column("split", pa.string(), "train or test: a seeded half of the relation's facts (lpaqa.multitoken.train_share)"),
    column("template", pa.string(), "the prompt asked"),
    column("method", pa.string(), "statement, mlama, independent, order, confidence or generate"),
    column("definition", pa.string(), "what the answer is chosen from and by (candidate set, score, ties)"),
    column("obj_tokens", pa.int32(), "tokens of the gold object's label in the model's tokenizer (object_tokens)"),
    column("prediction", pa.string(), "the answer: a candidate's label (closed methods) or the decoded text"),
    column(
        "prediction_score",
        pa.float64(),
        "what the answer won by: statement log-likelihood, mean mLAMA log-prob, open decoding's mean or sum "
        "of log-probs, generation's summed log-prob",
    ),
    column("prediction_tokens", pa.int32(), "the answer's tokens (-1 for statement, which scores whole statements)"),
    column("correct_exact", pa.bool_(), "normalised answer equals the normalised gold or an alias (SQuAD / lm-eval)"),
    column(
        "correct_substring",
        pa.bool_(),
        "a normalised gold or alias occurs in the normalised answer as whole words (PopQA's rule at word boundaries)",
    ),
)
MULTITOKEN_SELECTION = contract(
    "multitoken_selection",
    "Top-1 on the multi-token facts: per prompt set, method and relation, the template with the best "
    "exact-match accuracy on the train half (ties: the set's rank, then its order).",
    ("results/lpaqa/multitoken/selection/*.parquet",),
    column("prompt_set", pa.string(), "prompt set"),
    column("method", pa.string(), "statement, mlama, independent, order, confidence or generate"),
    column("relation", pa.string(), "relation id"),
    column("template", pa.string(), "the selected template"),
    column("prompts", pa.int32(), "distinct templates of the set for the relation"),
    column("train_facts", pa.int32(), "train facts of the relation"),
    column("train_accuracy", pa.float64(), "the selected template's exact-match accuracy on them (NaN: none)"),
)
PROMPTS = contract(
    "prompts",
    "A prompt set: templates with exactly one [X] and one [Y] per relation.",
    ("results/lpaqa/prompts/*.parquet", "results/lpaqa/paraphrase/seeds/*.parquet"),
    column("relation", pa.string(), "relation id"),
    column("template", pa.string(), "e.g. '[X] was born in [Y] .'"),
    column("source", pa.string(), "manual, mid, dep, dep+mid, paraphrase-of-SET"),
    column("rank", pa.int32(), "0 = best within the relation, by the set's own score"),
    column(
        "score", pa.float64(), "frequency (mined), round-trip log-prob (paraphrases), train P@1 (seeds); NaN for manual"
    ),
)
CANDIDATES = contract(
    "candidates",
    "A model's candidate vocabulary: the words P@1 ranks, as single word-initial tokens.",
    ("results/lpaqa/vocab/*.parquet", "results/stest/vocab/*.parquet"),
    column("word", pa.string(), "candidate word"),
    column("token_id", pa.int64(), "its token id in the model (sorted ascending)"),
)
PROBE = contract(
    "probe",
    "One model's scores for every (fact, prompt) of a prompt set on a dataset split, rows sorted by "
    "relation, prompt and fact, under one score (docs/lpaqa.md, Scores); beside it, "
    "SPLIT.hidden.safetensors holds per row what the selection stage ranks the candidates by "
    "without running the model again: the final hidden state at the mask (score mask) or at the "
    "prefix's last token (next_token), from which the LM head gives every candidate's log-prob, or "
    "the statement scores s(c) of the relation's candidate set C_r in its order (statement; float64, "
    "NaN past |C_r|).",
    ("results/lpaqa/probe/*/*/*/*.parquet",),
    column("relation", pa.string(), "relation id"),
    column("fact_id", pa.string(), "the fact"),
    column("sub_label", pa.string(), "subject label"),
    column("obj_label", pa.string(), "gold object label"),
    column("obj_token_id", pa.int64(), "gold object token id (statement: the gold's column in C_r)"),
    column("prompt_id", pa.int32(), "row of the prompt set"),
    column("template", pa.string(), "the prompt"),
    column("source", pa.string(), "the prompt's source"),
    column("rank", pa.int32(), "the prompt's rank in its set (0 = the set's best)"),
    column(
        "gold_logprob",
        pa.float32(),
        "log-prob of the gold object at the mask (next_token: as the next token), over the full vocabulary; "
        "statement: s(gold) - logsumexp of s over C_r",
    ),
    column("gold_rank", pa.int32(), "candidates scoring strictly higher than the gold object (0: correct)"),
    column("prediction", pa.string(), "the best candidate word"),
    column(
        "topk_ids",
        pa.list_(pa.int32()),
        "the lpaqa.probe.top_k best candidates' token ids (statement: columns in C_r), best first",
    ),
    column("topk_logprobs", pa.list_(pa.float32()), "their log-probs (statement: normalised over C_r)"),
    column("score", pa.string(), "mask, next_token or statement: what ranks the candidates (docs/lpaqa.md)"),
)
PROMPT_METRICS = contract(
    "prompt_metrics",
    "P@1 of every prompt of a prompt set, per relation.",
    ("results/lpaqa/metrics/*/*/*/*.parquet",),
    column("model", pa.string(), "model name"),
    column("prompt_set", pa.string(), "prompt set"),
    column("dataset", pa.string(), "trex or google_re"),
    column("split", pa.string(), "test, train or dev"),
    column("relation", pa.string(), "relation id"),
    column("prompt_id", pa.int32(), "row of the prompt set"),
    column("template", pa.string(), "the prompt"),
    column("n_facts", pa.int64(), "facts probed"),
    column("n_objects", pa.int64(), "unique gold objects"),
    column("micro", pa.float64(), "share of facts whose gold object ranks first"),
    column("macro", pa.float64(), "mean over unique objects of their facts' accuracy"),
)
RESULTS = contract(
    "results",
    "Per-relation P@1 of a method (one prediction per fact): what the tables average.",
    (
        "results/lpaqa/majority/*/*/*.parquet",
        "results/lpaqa/selection/*/*/results.parquet",
        "results/lpaqa/cross_model/*/*.parquet",
    ),
    column("model", pa.string(), "model name (the model probed)"),
    column("fitted_on", pa.string(), "the model whose train ranking and Opti weights were used ('-': Majority)"),
    column("prompt_set", pa.string(), "prompt set ('-' for baselines without prompts)"),
    column(
        "method",
        pa.string(),
        "Majority, Top1 .. TopK, Top1-linear .. TopK-linear, Opti, Oracle, Opti-forward, Opti+backward",
    ),
    column("dataset", pa.string(), "trex, trex_uhn or google_re"),
    column("split", pa.string(), "test, or dev (T-REx-train's held-out part)"),
    column("relation", pa.string(), "relation id"),
    column("n_facts", pa.int64(), "facts"),
    column("n_objects", pa.int64(), "unique gold objects"),
    column("micro", pa.float64(), "micro P@1 of the relation"),
    column("macro", pa.float64(), "macro P@1 of the relation"),
)
METHOD_FACTS = contract(
    "method_facts",
    "Whether each test fact is right under each selection method of a prompt set (per fact what "
    "RESULTS averages): the items the bootstrap intervals and paired comparisons resample.",
    ("results/lpaqa/selection/*/*/facts.parquet",),
    column("model", pa.string(), "model name"),
    column("prompt_set", pa.string(), "prompt set"),
    column(
        "method", pa.string(), "Top1 .. TopK, Top1-linear .. TopK-linear, Opti, Oracle, Opti-forward, Opti+backward"
    ),
    column("dataset", pa.string(), "trex, trex_uhn or google_re"),
    column("relation", pa.string(), "relation id"),
    column("fact_id", pa.string(), "the fact"),
    column("obj_label", pa.string(), "gold object label"),
    column("correct", pa.bool_(), "the gold object scores highest (ties allowed)"),
)
PROMPT_SELECTION = contract(
    "prompt_selection",
    "Each prompt's standing in the selection stage: train accuracy, rank, Opti weight.",
    ("results/lpaqa/selection/*/*/prompts.parquet",),
    column("model", pa.string(), "model name"),
    column("prompt_set", pa.string(), "prompt set"),
    column("dataset", pa.string(), "trex or google_re (whose relations borrow T-REx prompts)"),
    column("relation", pa.string(), "relation id"),
    column("prompt_id", pa.int32(), "the prompt's id in the probe tables"),
    column("template", pa.string(), "the prompt"),
    column("source", pa.string(), "the prompt's source"),
    column("set_rank", pa.int32(), "its rank in the set (ties of train accuracy go to the lower)"),
    column("train_facts", pa.int64(), "facts of the relation in T-REx-train's train split"),
    column("train_micro", pa.float64(), "its micro P@1 on them (NaN without train facts)"),
    column("train_rank", pa.int64(), "its rank by train micro P@1 (0 = Top-1)"),
    column("weight", pa.float64(), "its Opti weight (the softmax of the learned parameters)"),
    column("opti_epochs", pa.int64(), "epochs Opti ran for the relation"),
    column("opti_final_loss", pa.float64(), "mean training loss of its last epoch"),
)
BACKWARD = contract(
    "backward",
    "LPAQA's backward features (Table 15): log P(subject | object, prompt) of each fact's B most "
    "probable objects, rows in (relation, prompt, fact, position) order.",
    ("results/lpaqa/backward/*/*/*/*.parquet",),
    column("relation", pa.string(), "relation id"),
    column("fact_id", pa.string(), "the fact"),
    column("prompt_id", pa.int32(), "the prompt's id in the probe tables"),
    column("position", pa.int32(), "the object's place among the fact's B (0 = most probable forward)"),
    column("token_id", pa.int64(), "the object's token id"),
    column("backward_logprob", pa.float32(), "pseudo-log-likelihood of the subject with the object filled in"),
)
ENTITIES = contract(
    "entities",
    "Wikidata items with an English (or mul) label.",
    ("results/wikidata/entities.parquet", "results/wikidata/parts/entities-*.parquet"),
    column("qid", pa.string(), "item id"),
    column("label", pa.string(), "English label, or the mul label where there is no English one"),
    column("label_lang", pa.string(), "en or mul"),
    column("aliases", pa.list_(pa.string()), "English (or mul) aliases"),
    column("aliases_lang", pa.string(), "en or mul (null without aliases)"),
    column("enwiki", pa.string(), "English Wikipedia sitelink title (null without one)"),
)
CLAIMS = contract(
    "claims",
    "Statements of the configured properties with an item or a date value, deprecated ones dropped.",
    ("results/wikidata/claims.parquet", "results/wikidata/parts/claims-*.parquet"),
    column("subject", pa.string(), "subject item id"),
    column("property", pa.string(), "property id"),
    column("object", pa.string(), "object item id, or the year of a date value"),
    column("rank", pa.string(), "normal or preferred"),
)
SENTENCES = contract(
    "sentences",
    "Sentences of Wikipedia articles with the spans of their links.",
    ("results/lpaqa/wikipedia/parts/sentences-*.parquet",),
    column("page_id", pa.int64(), "article's page id"),
    column("title", pa.string(), "article's title"),
    column("sentence", pa.int32(), "sentence number within the article"),
    column("text", pa.string(), "the sentence, markup removed"),
    column("link_start", pa.list_(pa.int32()), "character offsets where links start"),
    column("link_end", pa.list_(pa.int32()), "and end"),
    column("link_target", pa.list_(pa.string()), "normalized target titles"),
)
REDIRECTS = contract(
    "redirects",
    "Wikipedia redirects of one extraction chunk.",
    ("results/lpaqa/wikipedia/parts/redirects-*.parquet",),
    column("title", pa.string(), "redirect page title"),
    column("target", pa.string(), "the title it redirects to"),
)
RESOLVED_REDIRECTS = contract(
    "resolved_redirects",
    "Wikipedia's redirects of all chunks, each with the title its chain of redirects ends at.",
    ("results/lpaqa/wikipedia/redirects.parquet",),
    column("title", pa.string(), "redirect page title"),
    column("target", pa.string(), "the title it redirects to"),
    column("final", pa.string(), "the title reached by following redirects from it, five at most (a loop stops there)"),
)
MATCHES = contract(
    "matches",
    "Sentences that mention both the subject and the object of a T-REx-train fact.",
    ("results/lpaqa/mining/matches.parquet", "results/lpaqa/mining/parts/matches-*.parquet"),
    column("relation", pa.string(), "relation id"),
    column("sub_uri", pa.string(), "subject item"),
    column("obj_uri", pa.string(), "object item"),
    column("title", pa.string(), "article"),
    column("sentence", pa.int32(), "sentence number in the article"),
    column("text", pa.string(), "the sentence"),
    column("sub_start", pa.int64(), "subject mention's first character"),
    column("sub_end", pa.int64(), "and end"),
    column("sub_how", pa.string(), "link, label or alias"),
    column("obj_start", pa.int64(), "object mention's first character"),
    column("obj_end", pa.int64(), "and end"),
    column("obj_how", pa.string(), "link, label or alias"),
)
MINED = contract(
    "mined",
    "Mined prompts ranked by frequency, per relation and kind (mid, dep).",
    ("results/lpaqa/mining/ranked.parquet",),
    column("relation", pa.string(), "relation id"),
    column("template", pa.string(), "the prompt"),
    column("source", pa.string(), "mid or dep"),
    column("frequency", pa.int64(), "matched sentences that gave it"),
    column("example", pa.string(), "one of those sentences"),
)
PARAPHRASE_CANDIDATES = contract(
    "paraphrase_candidates",
    "Every round-trip candidate of every seed (B squared per seed), kept or not.",
    ("results/lpaqa/paraphrase/*/candidates.parquet",),
    column("relation", pa.string(), "relation id"),
    column("seed", pa.string(), "the seed template"),
    column("source_text", pa.string(), "the seed as translated, with stand-ins"),
    column("german_rank", pa.int64(), "rank of the German hypothesis"),
    column("german", pa.string(), "German hypothesis"),
    column("english_rank", pa.int64(), "rank of the English hypothesis for that German one"),
    column("english", pa.string(), "back-translation"),
    column("forward_logprob", pa.float64(), "log P(german | seed), eos included"),
    column("forward_tokens", pa.int64(), "German tokens scored"),
    column("backward_logprob", pa.float64(), "log P(english | german)"),
    column("backward_tokens", pa.int64(), "English tokens scored"),
    column("forward_score", pa.float64(), "forward log-prob, per token if length-normalized"),
    column("backward_score", pa.float64(), "backward log-prob, per token if length-normalized"),
    column("score", pa.float64(), "forward_score + backward_score"),
    column("paraphrase", pa.string(), "the template (null when a placeholder broke)"),
    column("problem", pa.string(), "why there is no template (null when there is)"),
)
PARAPHRASES = contract(
    "paraphrases",
    "The kept paraphrases: the top T distinct templates per relation.",
    ("results/lpaqa/paraphrase/*/paraphrases.parquet",),
    column("relation", pa.string(), "relation id"),
    column("seed", pa.string(), "the seed template"),
    column("paraphrase", pa.string(), "the template"),
    column("german", pa.string(), "the German pivot"),
    column("forward_score", pa.float64(), "forward score"),
    column("backward_score", pa.float64(), "backward score"),
    column("score", pa.float64(), "round-trip score"),
    column("rank", pa.int64(), "0 = best within the relation"),
)

STEST_TRIPLES = contract(
    "stest_triples",
    "S-TEST's benchmark: one (subject, fine object, coarse object) triple per subject and relation.",
    ("results/stest/benchmark/*.parquet",),
    column("relation", pa.string(), "P19, P106, P131, P279 or P361"),
    column("sub_uri", pa.string(), "subject's Wikidata id"),
    column("sub_label", pa.string(), "subject's label, put in [X]"),
    column("fine_uri", pa.string(), "the more specific object's id"),
    column("fine_label", pa.string(), "its label (a candidate word)"),
    column("fine_distance", pa.float64(), "its mean distance in hops from the subject over all paths"),
    column("coarse_uri", pa.string(), "the less specific object's id"),
    column("coarse_label", pa.string(), "its label"),
    column("coarse_distance", pa.float64(), "its mean distance, at least min_gap more than the fine one's"),
    column("origin", pa.string(), "wikidata (built here) or released (the authors' files)"),
)
STEST_SCORES = contract(
    "stest_scores",
    "S-TEST's scores of the fine and coarse object of each triple, per model, measure, prompt and mode.",
    ("results/stest/scores/*.parquet",),
    column("model", pa.string(), "model name (a key of models)"),
    column("relation", pa.string(), "relation"),
    column("sub_uri", pa.string(), "the triple's subject"),
    column("measure", pa.string(), "specificity, naturalness (subject masked) or relatedness"),
    column("method", pa.string(), "VP, FP or CP (- for relatedness)"),
    column("mode", pa.string(), "mask, next_token, sentence (causal LMs) or embedding (relatedness)"),
    column("query", pa.string(), "the query, [Y] its object slots and [X] a masked subject"),
    column(
        "fine_score", pa.float64(), "the fine object's log-probability (cosine for relatedness); NaN if not a candidate"
    ),
    column("coarse_score", pa.float64(), "the coarse object's"),
    column("fine_in_vocab", pa.bool_(), "the fine object is a single-token candidate of the model"),
    column("coarse_in_vocab", pa.bool_(), "the coarse object is"),
)

COMPS_CONCEPTS = contract(
    "comps_concepts",
    "COMPS's concepts (the XCSLB norms) with what the negatives are chosen by.",
    ("results/comps/norms/concepts.parquet",),
    column("concept", pa.string(), "the concept as the norms name it (guinea_pig)"),
    column("category", pa.string(), "its CSLB category"),
    column("article", pa.string(), "the noun phrase naming it (a guinea_pig, an emu, hair)"),
    column("sensekey", pa.string(), "its WordNet 3.0 sense key"),
    column("synset", pa.int64(), "the sense's synset offset in data.noun; -1 where WordNet lacks the key"),
    column("is_animal", pa.bool_(), "a hyponym of the animal sense (COMPS-WUGS takes these)"),
    column("has_vector", pa.bool_(), "all of its words have GloVe vectors"),
)
COMPS_SIMILARITY = contract(
    "comps_similarity",
    "Every ordered pair of distinct COMPS concepts with the three similarities negatives are chosen by.",
    ("results/comps/norms/similarity.parquet",),
    column("concept", pa.string(), "a concept"),
    column("other", pa.string(), "another"),
    column("taxonomic", pa.float64(), "Wu-Palmer similarity of their WordNet senses; NaN without both senses"),
    column("overlap", pa.float64(), "Jaccard similarity of their property sets"),
    column("cooccurrence", pa.float64(), "cosine of their GloVe vectors; NaN without both vectors"),
)
COMPS_STIMULI = contract(
    "comps_stimuli",
    "COMPS's minimal pairs: a property phrase after an acceptable and an unacceptable prefix.",
    ("results/comps/stimuli/*.parquet",),
    column("subset", pa.string(), "base, wugs, wugs_dist_before or wugs_dist_in_between"),
    column("id", pa.int64(), "the pair's number within its subset"),
    column("property", pa.string(), "the property (an XCSLB feature)"),
    column("acceptable_concept", pa.string(), "a concept that has it"),
    column("unacceptable_concept", pa.string(), "a concept that has not"),
    column("prefix_acceptable", pa.string(), "the context naming the acceptable concept"),
    column("prefix_unacceptable", pa.string(), "the context naming the unacceptable one"),
    column("property_phrase", pa.string(), "the phrase scored after either prefix"),
    column("negative_sample_type", pa.string(), "taxonomic, overlap, co-occurrence or random"),
    column("similarity", pa.float64(), "the two concepts' similarity by that kind; NaN for random"),
    column("nonce_words", pa.string(), "the nonce word (wugs), then the distractor's (dist); empty for base"),
    column("origin", pa.string(), "built (here, from the norms) or released (the authors' files)"),
)
COMPS_SCORES = contract(
    "comps_scores",
    "One model's log p(property phrase | prefix) of both prefixes of every COMPS pair.",
    ("results/comps/scores/*.parquet",),
    column("model", pa.string(), "model name (a key of models)"),
    column("subset", pa.string(), "the pair's subset"),
    column("id", pa.int64(), "the pair's id within it"),
    column("acceptable_score", pa.float64(), "log p(phrase | acceptable prefix): summed, or the masked PLL"),
    column("unacceptable_score", pa.float64(), "log p(phrase | unacceptable prefix)"),
    column(
        "left_out",
        pa.string(),
        "why the model could not score the pair (too_long, no_tokens, no_context; both scores NaN), empty where scored",
    ),
)

BEAR_RELATIONS = contract(
    "bear_relations",
    "BEAR's relations as imported from a BEAR-format directory (metadata_relations.json).",
    ("results/bear/dataset/relations.parquet",),
    column("relation", pa.string(), "relation code (P6): its file is CODE.jsonl"),
    column("templates", pa.list_(pa.string()), "its templates, [X] the subject and [Y] the answer, in order"),
    column("answer_space_labels", pa.list_(pa.string()), "the candidate answers every instance is ranked over"),
    column("answer_space_ids", pa.list_(pa.string()), "their ids (Wikidata), aligned with the labels"),
    column("metadata", pa.string(), "the metadata's other keys as a JSON object, written back on export"),
    unique=("relation",),
)
BEAR_INSTANCES = contract(
    "bear_instances",
    "BEAR's instances: one fact per line of a relation's JSON-lines file.",
    ("results/bear/dataset/instances.parquet",),
    column("relation", pa.string(), "relation code"),
    column("instance", pa.int64(), "the line's position among the relation's kept lines, from 0"),
    column("sub_id", pa.string(), "subject's id"),
    column("sub_label", pa.string(), "subject's label, put in [X]"),
    column("obj_id", pa.string(), "the answer's id"),
    column("obj_label", pa.string(), "the answer's label"),
    column("answer_idx", pa.int64(), "the answer's position in the relation's answer space"),
    column("extra", pa.string(), "the line's other keys (sub_aliases) as a JSON object, written back on export"),
)
BEAR_SCORES = contract(
    "bear_scores",
    "One model's statement score of every candidate answer of every instance under every template.",
    ("results/bear/scores/*.parquet",),
    column("model", pa.string(), "model name (a key of models)"),
    column("relation", pa.string(), "relation code"),
    column("template", pa.int32(), "the template's position in the relation's list, from 0"),
    column("instance", pa.int64(), "the instance"),
    column("candidate", pa.int32(), "the candidate's position in the answer space"),
    column("score", pa.float64(), "the statement's log-likelihood (causal) or pseudo-log-likelihood (masked)"),
)

DEMO_CORPUS = contract(
    "demo_corpus",
    "A study's part of the demo models' training corpus: its facts written out as sentences.",
    ("results/*/demo/corpus.parquet",),
    column("text", pa.string(), "a sentence"),
    column("object_start", pa.int64(), "first character of the object, which training masks more often"),
    column("object_end", pa.int64(), "end of the object"),
)

CONTRACTS = {
    c.name: c
    for c in (
        FACTS,
        MODEL_FACTS,
        MULTITOKEN_FACTS,
        OBJECT_TOKENS,
        MULTITOKEN_PREDICTIONS,
        MULTITOKEN_SELECTION,
        PROMPTS,
        CANDIDATES,
        PROBE,
        PROMPT_METRICS,
        RESULTS,
        METHOD_FACTS,
        PROMPT_SELECTION,
        BACKWARD,
        ENTITIES,
        CLAIMS,
        SENTENCES,
        REDIRECTS,
        RESOLVED_REDIRECTS,
        MATCHES,
        MINED,
        PARAPHRASE_CANDIDATES,
        PARAPHRASES,
        STEST_TRIPLES,
        STEST_SCORES,
        COMPS_CONCEPTS,
        COMPS_SIMILARITY,
        COMPS_STIMULI,
        COMPS_SCORES,
        BEAR_RELATIONS,
        BEAR_INSTANCES,
        BEAR_SCORES,
        DEMO_CORPUS,
    )
}


def to_table(frame: pd.DataFrame | pa.Table, contract: Contract) -> pa.Table:
    """``frame`` cast to the contract (exactly its columns, in its order, of its types)."""
    table = frame if isinstance(frame, pa.Table) else pa.Table.from_pandas(frame, preserve_index=False)
    missing = [name for name in contract.columns if name not in table.column_names]
    extra = [name for name in table.column_names if name not in contract.columns]
    if missing or extra:
        raise ValueError(f"table for contract {contract.name}: missing columns {missing}, unexpected {extra}")
    return table.select(contract.columns).cast(contract.arrow_schema())


def repeated(table: pa.Table, contract: Contract, path) -> None:
    """Raise, naming the file and a value, where a column the contract holds unique repeats one."""
    for name in [n for n in contract.unique if n in table.column_names]:
        counts = pc.value_counts(table.column(name))  # one pass: each value with its count
        again = counts.filter(pc.greater(counts.field("counts"), 1)).field("values").to_pylist()
        if again:
            raise KnowprobeError(
                f"{path}: {len(again)} {name} values repeat (e.g. {again[0]!r}); a {contract.name} table holds "
                f"{name} unique"
            )


def write(frame: pd.DataFrame | pa.Table, path: str | os.PathLike, contract: Contract) -> None:
    table = to_table(frame, contract)
    repeated(table, contract, path)
    with atomic_path(path, digest=True) as tmp:
        pq.write_table(
            table.replace_schema_metadata(contract.arrow_schema(digest=True).metadata), tmp, compression="zstd"
        )


def check(path: str | os.PathLike, contract: Contract) -> pa.Schema:
    """The file's schema, after checking that it is a table of this contract and version, and
    that its bytes are those recorded as it was written (where its metadata says a digest was)."""
    path = Path(path)
    if not path.is_file():
        raise KnowprobeError(f"{path}: file not found")
    try:
        schema = pq.read_schema(path)
    except (pa.ArrowInvalid, OSError) as error:
        if digest_path(path).is_file():
            verify_digest(path)  # a damaged footer: say so, as for damage anywhere else
        raise KnowprobeError(f"{path}: not a Parquet file ({error})") from None
    metadata = schema.metadata or {}
    if metadata.get(b"knowprobe.digest") == b"sha256":
        verify_digest(path)
    name = metadata.get(b"knowprobe.contract", b"").decode()
    version = metadata.get(b"knowprobe.version", b"").decode()
    if name != contract.name or version != VERSION:
        found = f"contract {name} version {version}" if name else "no knowprobe contract"
        raise KnowprobeError(
            f"{path}: expected a {contract.name} table (version {VERSION}), found {found}; "
            "delete it to have it made anew"
        )
    for field in contract.schema:
        if field.name not in schema.names:
            raise KnowprobeError(f"{path}: column {field.name!r} missing ({contract.name} table)")
        found_type = schema.field(field.name).type
        if found_type != field.type:
            raise KnowprobeError(f"{path}: column {field.name!r} is {found_type}, expected {field.type}")
    return schema


def read(path: str | os.PathLike, contract: Contract, columns: list[str] | None = None) -> pd.DataFrame:
    check(path, contract)
    table = pq.read_table(path, columns=columns)
    repeated(table, contract, path)
    return table.to_pandas()


def concat(parts: list[str | Path], out: str | Path, contract: Contract) -> int:
    """Concatenate part files batch by batch (bounded memory); the number of rows."""
    rows = 0
    with atomic_path(out, digest=True) as tmp:
        with pq.ParquetWriter(tmp, contract.arrow_schema(digest=True), compression="zstd") as writer:
            for part in parts:
                check(part, contract)
                for batch in pq.ParquetFile(part).iter_batches(batch_size=PARQUET_ROW_GROUP):
                    writer.write_batch(batch)
                    rows += batch.num_rows
    return rows


class PartWriter:
    """Rows of one contract written in row groups of PARQUET_ROW_GROUP as they come, so memory
    stays bounded; renamed into place when closed with ``ok``."""

    def __init__(self, path, contract: Contract, dictionary: tuple[str, ...] | None = None):
        """``dictionary``: the columns to dictionary-encode, where not all (columns of distinct
        values, such as sentences, fill a dictionary page and fall back to plain encoding; read
        back, such a column costs about three times as much)."""
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = self.path.with_name(f".{self.path.name}.part")
        self.schema, self.count = contract.arrow_schema(digest=True), 0
        self.rows = {name: [] for name in self.schema.names}
        use_dictionary = list(dictionary) if dictionary is not None else True
        with self.naming_the_file():
            self.writer = pq.ParquetWriter(self.tmp, self.schema, compression="zstd", use_dictionary=use_dictionary)

    def extend(self, *columns):
        """Append rows given column by column (cheaper than row by row in a hot loop)."""
        for column_rows, values in zip(self.rows.values(), columns):
            column_rows.extend(values)
        if len(self.rows[self.schema.names[0]]) >= PARQUET_ROW_GROUP:
            self.flush()

    def write(self, table: pa.Table):
        """Write rows already gathered as a table (after any rows given to ``extend``)."""
        self.flush()
        if table.num_rows:
            with self.naming_the_file():
                self.writer.write_table(table.cast(self.schema))
            self.count += table.num_rows

    def flush(self):
        n = len(self.rows[self.schema.names[0]])
        if n:
            with self.naming_the_file():
                self.writer.write_table(pa.table(self.rows, schema=self.schema))
            self.count += n
            self.rows = {name: [] for name in self.schema.names}

    @contextlib.contextmanager
    def naming_the_file(self):
        """A full disk as an OSError naming this table (pyarrow's names no file)."""
        try:
            yield
        except OSError as error:
            if is_disk_full(error) and error.filename in (None, str(self.tmp)):
                raise disk_full_error(error, self.path) from error
            raise

    def close(self, ok: bool):
        """Rename the part into place (``ok``) or remove it. Whatever fails on the way (a full
        disk while the last rows are flushed), nothing partial is left."""
        try:
            if ok:
                self.flush()
            with self.naming_the_file():
                self.writer.close()
            if ok:
                os.replace(self.tmp, self.path)
                record_digest(self.path)
        except BaseException:
            with contextlib.suppress(Exception):
                self.writer.close()
            self.tmp.unlink(missing_ok=True)
            raise
        self.tmp.unlink(missing_ok=True)


def close_all(writers: list[PartWriter], ok: bool) -> None:
    """Close every writer (each removes its part on failure), then raise the first error."""
    first = None
    for writer in writers:
        try:
            writer.close(ok and first is None)
        except BaseException as error:  # noqa: BLE001 (re-raised below, once every writer is closed)
            first = first or error
    if first is not None:
        raise first


def markdown() -> str:
    """docs/contracts.md's tables: every contract, its files and its columns."""
    lines = []
    for c in CONTRACTS.values():
        lines += [f"### `{c.name}`", "", c.description, "", "Files: " + ", ".join(f"`{p}`" for p in c.paths), ""]
        lines += ["| column | type | meaning |", "|---|---|---|"]
        lines += [f"| `{f.name}` | `{f.type}` | {f.metadata[b'doc'].decode()} |" for f in c.schema]
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(), end="")
