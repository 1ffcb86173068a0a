"""Tiny masked and causal LMs for the offline demo, trained by the workflow itself.

No pre-trained weights can be downloaded offline, so the demo trains 2-layer BERT (masked) and
GPT-2 (causal) models with a word-level vocabulary on a small synthetic corpus: facts of the demo benchmark written out
with *corpus templates* (phrasings other than the probing prompts). A share of the facts
(``holdout``) never appears in the corpus, so the demo's P@1 measures what this little
model memorised and how far that carries across phrasings — not knowledge of the world.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from .config import schema_defaults
from .io import KnowprobeError, file_mode, progress, read_jsonl, writing
from .prompts import OBJECT, SUBJECT, check_template

log = logging.getLogger(__name__)

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


_DEFAULTS = schema_defaults("models", "*", "train")


@dataclass(frozen=True)
class TinyLMSettings:
    """A demo model's ``train`` settings (the config's ``models.NAME.train``)."""

    hidden_size: int = _DEFAULTS["hidden_size"]
    layers: int = _DEFAULTS["layers"]
    heads: int = _DEFAULTS["heads"]
    steps: int = _DEFAULTS["steps"]
    batch_size: int = _DEFAULTS["batch_size"]
    learning_rate: float = _DEFAULTS["learning_rate"]
    object_mask_rate: float = _DEFAULTS["object_mask_rate"]  # how often the object is masked, besides 15% of all tokens
    seed: int = _DEFAULTS["seed"]


def corpus(facts: pd.DataFrame, templates: pd.DataFrame, holdout: float, seed: int, known: pd.DataFrame | None = None):
    """Sentences ``(text, object_start, object_end)`` for the facts not held out, and the held-out
    ids; the ``known`` facts (``relation, sub_label, obj_label``) are written out as well, none held out.
    A fact that states what a held-out one states (the same subject and object labels: Google-RE's
    place of birth and T-REx's P19 share facts) is not written out either."""
    rng = np.random.default_rng(seed)
    fact_ids = np.array(sorted(facts["fact_id"].unique()))
    held_out = set(rng.choice(fact_ids, size=int(round(holdout * len(fact_ids))), replace=False))
    held_pairs = {(s, o) for i, s, o in zip(facts["fact_id"], facts["sub_label"], facts["obj_label"]) if i in held_out}
    by_relation = {r: list(g["template"]) for r, g in templates.groupby("relation")}
    sentences = []
    if known is not None:
        facts = pd.concat([facts, known.assign(fact_id=None)], ignore_index=True)
    for fact in facts.itertuples():
        if fact.fact_id in held_out or (fact.sub_label, fact.obj_label) in held_pairs:
            continue
        for template in by_relation.get(fact.relation, []):
            before, after = template.replace(SUBJECT, fact.sub_label).split(OBJECT)
            sentences.append((before + fact.obj_label + after, len(before), len(before) + len(fact.obj_label)))
    if not sentences:
        raise KnowprobeError("the demo corpus is empty: no corpus template matches a relation of the facts")
    return sentences, held_out


def claim_facts(claims: pd.DataFrame, entities: pd.DataFrame, relations: set[str], exclude: set[tuple[str, str]]):
    """``relation, sub_label, obj_label`` of the Wikidata claims of ``relations`` (a date's object
    is its year), less those whose label pair is in ``exclude``."""
    labels = dict(zip(entities["qid"], entities["label"]))
    claims = claims[claims["property"].isin(relations)]
    rows = []
    for prop, subject, obj in zip(claims["property"], claims["subject"], claims["object"]):
        sub_label, obj_label = labels.get(subject), labels.get(obj, obj if obj.isdigit() else None)
        if sub_label is not None and obj_label is not None and (sub_label, obj_label) not in exclude:
            rows.append((prop, sub_label, obj_label))
    return pd.DataFrame(rows, columns=["relation", "sub_label", "obj_label"]).drop_duplicates(ignore_index=True)


def read_corpus_templates(path: str | Path) -> pd.DataFrame:
    rows = [
        {"relation": r["relation"], "template": check_template(r["template"], f"{path}:{n}")}
        for n, r in read_jsonl(path, required=("relation", "template"))
    ]
    return pd.DataFrame(rows, columns=["relation", "template"])


def build_vocab(texts: list[str]) -> list[str]:
    """Special tokens, then every word of ``texts`` as BERT's pre-tokenizer splits them, sorted."""
    from tokenizers.pre_tokenizers import BertPreTokenizer

    splitter = BertPreTokenizer()
    words = set()
    for text in texts:
        words.update(piece for piece, _ in splitter.pre_tokenize_str(text))
    words -= set(SPECIAL_TOKENS)
    return SPECIAL_TOKENS + sorted(words)


def make_tokenizer(vocab: list[str]):
    from transformers import BertTokenizerFast

    # transformers 5 takes the vocabulary as ``vocab=``; ``vocab_file=`` is silently ignored
    tokenizer = BertTokenizerFast(
        vocab={token: i for i, token in enumerate(vocab)}, do_lower_case=False, tokenize_chinese_chars=False
    )
    if len(tokenizer) != len(vocab):
        raise RuntimeError(f"tokenizer has {len(tokenizer)} tokens, vocabulary {len(vocab)}")
    return tokenizer


def make_causal_tokenizer(vocab: list[str]):
    """A word-level tokenizer for the tiny causal LM: the same words as the masked one's, split
    as BERT splits text, [CLS] as the start (BOS) token every sequence begins with."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.WordLevel({token: i for i, token in enumerate(vocab)}, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, bos_token="[CLS]", eos_token="[SEP]", unk_token="[UNK]", pad_token="[PAD]"
    )
    if len(tokenizer) != len(vocab):
        raise RuntimeError(f"tokenizer has {len(tokenizer)} tokens, vocabulary {len(vocab)}")
    return tokenizer


def _causal_batch(encoded, tokenizer):
    """Pad a batch of [BOS] + sentence sequences; every real token is a target."""
    width = max(len(ids) for ids, _ in encoded)
    ids = np.full((len(encoded), width), tokenizer.pad_token_id, dtype=np.int64)
    attention = np.zeros_like(ids)
    for row, (tokens, _) in enumerate(encoded):
        ids[row, : len(tokens)] = tokens
        attention[row, : len(tokens)] = 1
    labels = np.where(attention == 1, ids, -100)
    return torch.from_numpy(ids), torch.from_numpy(attention), torch.from_numpy(labels)


def _training_batch(encoded, rng, tokenizer, settings: TinyLMSettings):
    """Pad a batch; mask 15% of tokens (80/10/10 as BERT) and the object with ``object_mask_rate``."""
    width = max(len(ids) for ids, _ in encoded)
    ids = np.full((len(encoded), width), tokenizer.pad_token_id, dtype=np.int64)
    labels = np.full_like(ids, -100)
    attention = np.zeros_like(ids)
    for row, (tokens, object_positions) in enumerate(encoded):
        n = len(tokens)
        ids[row, :n] = tokens
        attention[row, :n] = 1
        chosen = rng.random(n) < 0.15
        chosen[0] = chosen[n - 1] = False  # [CLS], [SEP]
        if rng.random() < settings.object_mask_rate:
            chosen[object_positions] = True
        labels[row, :n][chosen] = np.asarray(tokens)[chosen]
        roll = rng.random(n)
        replace = chosen & (roll < 0.8)
        randomize = chosen & (roll >= 0.8) & (roll < 0.9)
        ids[row, :n][replace] = tokenizer.mask_token_id
        ids[row, :n][randomize] = rng.integers(len(SPECIAL_TOKENS), len(tokenizer), size=int(randomize.sum()))
    return torch.from_numpy(ids), torch.from_numpy(attention), torch.from_numpy(labels)


def train(
    sentences,
    vocab_texts: list[str],
    out_dir: str | Path,
    settings: TinyLMSettings = TinyLMSettings(),
    kind: str = "masked",
) -> dict:
    """Train the tiny masked (BERT) or causal (GPT-2) LM and save model and tokenizer to
    ``out_dir`` (written atomically).

    Training runs in one CPU thread, always: with two, torch sums in another order and the
    weights differ (by ~1e-6 after 60 steps), and with them every demo table, so the same inputs
    would give other numbers at ``--cores 1`` than at ``--cores 2``. One thread costs little
    (6.4 s against 4.8 s with two for 150 steps on a quiet machine) and is much faster when the
    machine is shared (21 s against 358 s measured with another job running)."""
    from transformers import BertConfig, BertForMaskedLM, GPT2Config, GPT2LMHeadModel

    torch.manual_seed(settings.seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    rng = np.random.default_rng(settings.seed)
    vocab = build_vocab(vocab_texts + [s for s, _, _ in sentences])
    tokenizer = make_tokenizer(vocab) if kind == "masked" else make_causal_tokenizer(vocab)
    start_tokens = [] if kind == "masked" else [tokenizer.bos_token_id]  # BERT's tokenizer adds [CLS] itself
    batch = tokenizer([s for s, _, _ in sentences], return_offsets_mapping=True, add_special_tokens=kind == "masked")
    encoded = []
    for ids, offsets, (_, start, end) in zip(batch["input_ids"], batch["offset_mapping"], sentences):
        positions = [p + len(start_tokens) for p, (a, b) in enumerate(offsets) if b > a and a >= start and b <= end]
        encoded.append((start_tokens + list(ids), positions))
    if kind == "masked":
        config = BertConfig(
            vocab_size=len(tokenizer),
            hidden_size=settings.hidden_size,
            num_hidden_layers=settings.layers,
            num_attention_heads=settings.heads,
            intermediate_size=4 * settings.hidden_size,
            max_position_embeddings=128,
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
        )
        model = BertForMaskedLM(config)
    else:
        config = GPT2Config(
            vocab_size=len(tokenizer),
            n_embd=settings.hidden_size,
            n_layer=settings.layers,
            n_head=settings.heads,
            n_positions=256,
            resid_pdrop=0.0,
            embd_pdrop=0.0,
            attn_pdrop=0.0,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
        )
        model = GPT2LMHeadModel(config)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / 100) * max(0.0, 1 - step / settings.steps)
    )
    log.info(
        "training a %d-layer %s LM (%d parameters, vocabulary %d) on %d sentences for %d steps",
        settings.layers,
        kind,
        sum(p.numel() for p in model.parameters()),
        len(tokenizer),
        len(sentences),
        settings.steps,
    )
    losses = []
    with progress(range(settings.steps), unit="step", desc="train") as bar:
        for step in bar:
            chosen = rng.choice(len(encoded), size=min(settings.batch_size, len(encoded)), replace=False)
            chosen_rows = [encoded[i] for i in chosen]
            if kind == "masked":
                ids, attention, labels = _training_batch(chosen_rows, rng, tokenizer, settings)
            else:
                ids, attention, labels = _causal_batch(chosen_rows, tokenizer)
            losses.append(
                training_step(
                    model, optimizer, schedule, model(input_ids=ids, attention_mask=attention, labels=labels).loss
                )
            )
            if (step + 1) % 250 == 0:
                log.info("step %d: mean loss of the last 250 steps %.3f", step + 1, np.mean(losses[-250:]))
    summary = {
        "sentences": len(sentences),
        "vocabulary": len(tokenizer),
        "steps": settings.steps,
        "first_loss": losses[0],
        "final_loss": float(np.mean(losses[-50:])),
    }
    staging_dir(out_dir)  # clears what a killed run may have left there
    save_trained(model, tokenizer, out_dir, summary)
    torch.set_num_threads(threads)
    return summary


def training_step(model, optimizer, schedule, loss) -> float:
    """Backward, clip, step; the loss as a number."""
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    schedule.step()
    optimizer.zero_grad()
    return loss.item()


def _staging_path(out_dir: Path) -> Path:
    return out_dir.with_name(out_dir.name + ".training")


def staging_dir(out_dir: str | Path) -> Path:
    """Where a model is written before it is renamed to ``out_dir`` (emptied first)."""
    staging = _staging_path(Path(out_dir))
    shutil.rmtree(staging, ignore_errors=True)
    return staging


def save_trained(model, tokenizer, out_dir: str | Path, summary: dict) -> None:
    """Save model, tokenizer and training summary in the staging folder (``staging_dir``), then
    rename it to ``out_dir``: a job killed while saving leaves no half-written model behind."""
    out_dir = Path(out_dir)
    staging = _staging_path(out_dir)
    model.eval()
    with writing(out_dir, staging):  # a full disk names the model being written, not "a file"
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        (staging / "knowprobe_training.json").write_text(json.dumps(summary, indent=2) + "\n")
    # save_pretrained writes model.safetensors readable by its owner only: give every file the
    # mode the rest of the results have, so that a group sharing them can read the model too
    mode = file_mode()
    for path in staging.rglob("*"):
        if path.is_file():
            os.chmod(path, mode)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.replace(staging, out_dir)
