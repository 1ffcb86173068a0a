"""Back-translation paraphrasing of prompts (LPAQA §3.2).

Each seed template goes to German with beam search returning B hypotheses, each of those
back to English returning B, so a seed has B² candidates. A candidate's score is
``log P_forward(german | seed) + log P_backward(english | german)``: the log of the paper's
round-trip probability. Both terms are recomputed by one teacher-forced pass over the
generated tokens, so they are the models' own log-probabilities, independent of beam-search
length penalties; ``length_normalize`` divides each term by its token count (eos included).

Placeholders: ``[X]`` and ``[Y]`` do not survive translation (brackets get translated,
split or dropped), so the seed is translated with *stand-ins* in their place (default: the
capital letters ``X`` and ``Y``, which translation models copy through like names) and a
candidate is kept only when each stand-in occurs exactly once as a word; it then gets its
``[X]``/``[Y]`` back. Candidates are de-duplicated per relation (the best score stays) and
the top T are the paraphrase prompt set. Every lost candidate is counted by reason.

Backends: any Hugging Face seq2seq translation pair (FSMT ``facebook/wmt19-en-de`` /
``-de-en`` by default, Marian ``Helsinki-NLP/opus-mt-*``, ...) through :class:`HFTranslator`;
fairseq's hub models through :class:`FairseqTranslator` (own conda env, ``envs/fairseq.yaml``).
This module keeps to Python 3.8 syntax at run time because the fairseq env needs that Python.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass
from typing import NamedTuple

import pandas as pd

from ..config import schema_defaults
from ..contracts import PARAPHRASE_CANDIDATES, PARAPHRASES
from ..io import KnowprobeError, progress
from ..prompts import OBJECT, SUBJECT, prompt_table

log = logging.getLogger(__name__)


_DEFAULTS = schema_defaults("lpaqa", "paraphrase")


@dataclass(frozen=True)
class ParaphraseSettings:
    """The round-trip settings of the config's ``lpaqa.paraphrase`` section."""

    beams: int = _DEFAULTS["beams"]  # B: hypotheses per translation, B² candidates per seed
    top: int = _DEFAULTS["top"]  # T: paraphrases kept per relation
    length_normalize: bool = _DEFAULTS["length_normalize"]
    subject_stand_in: str = _DEFAULTS["subject_stand_in"]
    object_stand_in: str = _DEFAULTS["object_stand_in"]
    batch_size: int = _DEFAULTS["batch_size"]  # source sentences per generate call (each expands to B beams)
    max_new_tokens: int = _DEFAULTS["max_new_tokens"]
    device: str = _DEFAULTS["device"]
    dtype: str = _DEFAULTS["dtype"]
    seed: int = _DEFAULTS["seed"]


class Hypothesis(NamedTuple):
    text: str
    logprob: float  # sum of the token log-probabilities, eos included
    tokens: int  # generated tokens scored, eos included
    token_ids: tuple[int, ...] = ()


_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?])")
_FINAL_PUNCT = re.compile(r"\s*([.!?])$")


def _stand_in_pattern(stand_in: str) -> re.Pattern:
    # the stand-in as a word, with brackets or parentheses a model may have put around it
    return re.compile(r"(?<![\w\[(])[\[(]?\s*" + re.escape(stand_in) + r"\s*[\])]?(?![\w\])])")


def check_stand_ins(settings: ParaphraseSettings) -> None:
    subject, obj = settings.subject_stand_in, settings.object_stand_in
    for key, value in (("subject_stand_in", subject), ("object_stand_in", obj)):
        if not value.strip() or value != value.strip():
            raise KnowprobeError(f"config paraphrase.{key}: {value!r} must be a non-empty word")
    if subject == obj:
        raise KnowprobeError("config paraphrase: subject_stand_in and object_stand_in must differ")


def to_source(template: str, settings: ParaphraseSettings) -> str | None:
    """The seed as a translation model should see it: stand-ins for the slots, no space before
    punctuation (LAMA writes ``[X] was born in [Y] .``). None when a stand-in already occurs
    in the template as a word, which would make the way back ambiguous."""
    without_slots = template.replace(SUBJECT, " ").replace(OBJECT, " ")
    for stand_in in (settings.subject_stand_in, settings.object_stand_in):
        if _stand_in_pattern(stand_in).search(without_slots):
            return None
    text = template.replace(SUBJECT, settings.subject_stand_in).replace(OBJECT, settings.object_stand_in)
    return _SPACE_BEFORE_PUNCT.sub(r"\1", " ".join(text.split()))


def to_template(text: str, settings: ParaphraseSettings) -> tuple[str | None, str | None]:
    """``(template, None)`` for a back-translation whose stand-ins each occur exactly once,
    else ``(None, reason)``. The template is in LAMA's layout: single spaces, final
    sentence punctuation split off."""
    found = {}
    for slot, stand_in, name in (
        (SUBJECT, settings.subject_stand_in, "subject"),
        (OBJECT, settings.object_stand_in, "object"),
    ):
        matches = list(_stand_in_pattern(stand_in).finditer(text))
        if len(matches) != 1:
            return None, f"{name} stand-in {'missing' if not matches else 'repeated'}"
        found[slot] = matches[0]
    # replace from the right so that the earlier match's offsets stay valid
    for slot, match in sorted(found.items(), key=lambda item: -item[1].start()):
        text = text[: match.start()] + slot + text[match.end() :]
    template = _FINAL_PUNCT.sub(r" \1", " ".join(text.split())).strip()
    if template.replace(SUBJECT, "").replace(OBJECT, "").strip(" .,;:!?") == "":
        return None, "nothing but the slots"
    return template, None


def round_trip(seeds: pd.DataFrame, forward, backward, settings: ParaphraseSettings) -> pd.DataFrame:
    """Every B² candidate of every seed (``relation``, ``template`` columns), with its scores
    and either its paraphrase template or the reason it has none (PARAPHRASE_CANDIDATES.columns)."""
    check_stand_ins(settings)
    usable, sources = [], []
    for row in seeds.itertuples(index=False):
        source = to_source(row.template, settings)
        if source is None:
            log.warning(
                "seed %r of %s already contains a stand-in word (%s/%s); it is not paraphrased",
                row.template,
                row.relation,
                settings.subject_stand_in,
                settings.object_stand_in,
            )
            continue
        usable.append((row.relation, row.template))
        sources.append(source)
    if not sources:
        return pd.DataFrame(columns=PARAPHRASE_CANDIDATES.columns)
    beams = settings.beams
    log.info("translating %d seeds to German (B=%d)", len(sources), beams)
    german = forward.translate(sources, beams, settings)
    flat = [hyp for hyps in german for hyp in hyps]
    log.info("translating %d German hypotheses back to English (B=%d)", len(flat), beams)
    english = backward.translate([hyp.text for hyp in flat], beams, settings)
    rows = []
    for seed_index, ((relation, template), source) in enumerate(zip(usable, sources)):
        for german_rank, de in enumerate(german[seed_index]):
            for english_rank, en in enumerate(english[seed_index * beams + german_rank]):
                forward_score = de.logprob / de.tokens if settings.length_normalize else de.logprob
                backward_score = en.logprob / en.tokens if settings.length_normalize else en.logprob
                paraphrase, problem = to_template(en.text, settings)
                rows.append(
                    (
                        relation,
                        template,
                        source,
                        german_rank,
                        de.text,
                        english_rank,
                        en.text,
                        de.logprob,
                        de.tokens,
                        en.logprob,
                        en.tokens,
                        forward_score,
                        backward_score,
                        forward_score + backward_score,
                        paraphrase,
                        problem,
                    )
                )
    return pd.DataFrame(rows, columns=PARAPHRASE_CANDIDATES.columns)


def select(candidates: pd.DataFrame, top: int) -> tuple[pd.DataFrame, Counter]:
    """The top ``top`` distinct paraphrases per relation (PARAPHRASES.columns) and the counts of
    candidates lost, by reason."""
    lost = Counter(candidates["problem"].dropna())
    valid = candidates[candidates["problem"].isna()]
    # best first; ties keep beam order so that the result does not depend on sort stability
    ordered = valid.sort_values(
        ["relation", "score", "german_rank", "english_rank"], ascending=[True, False, True, True], kind="stable"
    )
    distinct = ordered.drop_duplicates(["relation", "paraphrase"], keep="first")
    lost["duplicate"] = len(ordered) - len(distinct)
    ranked = distinct.assign(rank=distinct.groupby("relation").cumcount())
    kept = ranked[ranked["rank"] < top]
    lost["beyond top T"] = len(ranked) - len(kept)
    return kept[PARAPHRASES.columns].reset_index(drop=True), lost


def as_prompt_set(paraphrases: pd.DataFrame, seed_set: str) -> pd.DataFrame:
    return prompt_table(
        [
            {
                "relation": row.relation,
                "template": row.paraphrase,
                "source": f"paraphrase-of-{seed_set}",
                "rank": int(row.rank),
                "score": float(row.score),
            }
            for row in paraphrases.itertuples(index=False)
        ]
    )


def statistics(
    seed_set: str, seeds: pd.DataFrame, candidates: pd.DataFrame, paraphrases: pd.DataFrame, lost: Counter
) -> pd.DataFrame:
    """One row: how many candidates each step kept or lost (the README's placeholder loss rate)."""
    broken = sum(n for reason, n in lost.items() if "stand-in" in reason or reason == "nothing but the slots")
    return pd.DataFrame(
        [
            {
                "seed_set": seed_set,
                "seeds": len(seeds),
                # a seed that already holds a stand-in word is not translated (see round_trip)
                "seeds_paraphrased": candidates[["relation", "seed"]].drop_duplicates().shape[0],
                "candidates": len(candidates),
                "placeholder_broken": broken,
                "placeholder_loss_rate": broken / len(candidates) if len(candidates) else float("nan"),
                **{f"lost_{reason.replace(' ', '_').replace('-', '_')}": n for reason, n in sorted(lost.items())},
                "kept": len(paraphrases),
                "relations": paraphrases["relation"].nunique(),
            }
        ]
    )


def select_mined_seeds(mined: pd.DataFrame, train_metrics: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Mine+Para's seeds: per relation, the mined prompt with the best micro P@1 on T-REx-train
    (ties: the more frequent). Relations without train facts fall back to their most frequent
    mined prompt; their number is returned beside the seeds."""
    accuracy = train_metrics.set_index(["relation", "template"])["micro"]
    frame = mined.assign(
        train_p_at_1=[accuracy.get((r, t), float("nan")) for r, t in zip(mined["relation"], mined["template"])]
    )
    rows, fallbacks = [], 0
    for relation, group in frame.groupby("relation", sort=True):
        if group["train_p_at_1"].notna().any():
            best = group.sort_values(["train_p_at_1", "rank"], ascending=[False, True], kind="stable").iloc[0]
        else:
            fallbacks += 1
            best = group.sort_values("rank", kind="stable").iloc[0]
        rows.append(
            {
                "relation": relation,
                "template": best["template"],
                "source": best["source"],
                "rank": 0,
                "score": float(best["train_p_at_1"]),
            }
        )
    return prompt_table(rows), fallbacks


# --- backends -------------------------------------------------------------------------------


def _batches(items: list, size: int):
    for start in range(0, len(items), size):
        yield items[start : start + size]


class HFTranslator:
    """A Hugging Face seq2seq translation model (FSMT, Marian, M2M100, NLLB, T5, ...)."""

    def __init__(self, model_dir, device: str = _DEFAULTS["device"], dtype: str = _DEFAULTS["dtype"]):
        import torch
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        from ..devices import resolve_device, resolve_dtype

        self.device = resolve_device(device)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
            self.model = (
                AutoModelForSeq2SeqLM.from_pretrained(str(model_dir), dtype=resolve_dtype(dtype, self.device))
                .to(self.device)
                .eval()
            )
        except Exception as error:
            raise KnowprobeError(
                f"{model_dir}: cannot load a seq2seq translation model ({type(error).__name__}: {error})"
            ) from None
        self.torch = torch

    def translate(self, texts: list[str], beams: int, settings: ParaphraseSettings) -> list[list[Hypothesis]]:
        """``beams`` hypotheses for each text, best first by the model's log-probability."""
        # sorting by length keeps padding small; results go back to the input order
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        by_index = {}
        for batch in progress(list(_batches(order, settings.batch_size)), desc="translate", unit="batch"):
            for index, hyps in zip(batch, self._translate_batch([texts[i] for i in batch], beams, settings)):
                by_index[index] = hyps
        return [by_index[i] for i in range(len(texts))]

    def _translate_batch(self, texts, beams, settings):
        torch = self.torch
        torch.manual_seed(settings.seed)
        encoded = self.tokenizer(texts, return_tensors="pt", padding=True, truncation=True).to(self.device)
        with torch.inference_mode():
            generated = self.model.generate(
                **encoded,
                num_beams=beams,
                num_return_sequences=beams,
                do_sample=False,
                max_new_tokens=settings.max_new_tokens,
                max_length=None,
                early_stopping=True,
            )
            logprobs, lengths = self._sequence_logprobs(encoded, generated, beams)
        texts_out = self.tokenizer.batch_decode(generated, skip_special_tokens=True, clean_up_tokenization_spaces=True)
        hyps = [
            Hypothesis(" ".join(t.split()), float(lp), int(n), tuple(ids[1 : 1 + int(n)]))
            for t, lp, n, ids in zip(texts_out, logprobs, lengths, generated.tolist())
        ]
        return [sorted(hyps[i * beams : (i + 1) * beams], key=lambda h: -h.logprob) for i in range(len(texts))]

    def _sequence_logprobs(self, encoded, generated, beams):
        """Teacher-forced log P(generated | source) summed over the generated tokens up to and
        including the first eos (the decoder start token is given, not generated)."""
        torch = self.torch
        config = self.model.generation_config
        eos = config.eos_token_id if isinstance(config.eos_token_id, int) else config.eos_token_id[0]
        pad = config.pad_token_id
        decoder_input = generated[:, :-1]
        labels = generated[:, 1:]
        is_eos = labels == eos
        # positions after the first eos are padding
        after_eos = (is_eos.long().cumsum(dim=1) - is_eos.long()) > 0
        mask = ~after_eos
        if pad is not None and pad != eos:
            mask &= labels != pad
        attention = encoded["attention_mask"].repeat_interleave(beams, dim=0)
        # use_cache=False: FSMT applies its causal mask only then (with the cache on it expects one
        # token per call, as in generation, and would let each position see the later ones)
        logits = self.model(
            input_ids=encoded["input_ids"].repeat_interleave(beams, dim=0),
            attention_mask=attention,
            decoder_input_ids=decoder_input,
            use_cache=False,
        ).logits.float()
        token_logprobs = torch.log_softmax(logits, dim=-1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)
        return (token_logprobs * mask).sum(dim=1).tolist(), mask.sum(dim=1).tolist()


# The code torch.hub runs for fairseq's hub models: the tag of the fairseq release that
# envs/fairseq.yaml installs, not the repository's default branch, which moves (and whose hubconf
# then imports code the installed fairseq lacks)
FAIRSEQ_HUB = "facebookresearch/fairseq:v0.12.2"


class FairseqTranslator:
    """One of fairseq's hub translation models (LPAQA's own stack), e.g.
    ``transformer.wmt19.en-de.single_model``. Runs in envs/fairseq.yaml."""

    def __init__(self, hub_name: str, device: str = "auto", checkpoint_file: str = "model.pt"):
        import torch

        try:
            self.model = torch.hub.load(
                FAIRSEQ_HUB, hub_name, checkpoint_file=checkpoint_file, tokenizer="moses", bpe="fastbpe"
            )
        except Exception as error:
            raise KnowprobeError(
                f"fairseq hub model {hub_name!r} cannot be loaded ({type(error).__name__}: {error})"
            ) from None
        use_cuda = torch.cuda.is_available() if device == "auto" else device.startswith("cuda")
        if use_cuda:
            self.model.cuda()
        self.model.eval()

    def translate(self, texts: list[str], beams: int, settings: ParaphraseSettings) -> list[list[Hypothesis]]:
        out = []
        for batch in progress(list(_batches(texts, settings.batch_size)), desc="translate", unit="batch"):
            tokens = [self.model.encode(text) for text in batch]
            # fairseq's beam search returns all B finished hypotheses; positional_scores are the
            # natural-log token probabilities (eos included), unaffected by its length penalty
            results = self.model.generate(tokens, beam=beams, max_len_b=settings.max_new_tokens)
            for hyps in results:
                out.append(
                    sorted(
                        (
                            Hypothesis(
                                self.model.decode(h["tokens"]),
                                float(h["positional_scores"].sum()),
                                int(h["tokens"].numel()),
                                tuple(h["tokens"].tolist()),
                            )
                            for h in hyps[:beams]
                        ),
                        key=lambda h: -h.logprob,
                    )
                )
        return out
