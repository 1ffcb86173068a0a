"""Tiny Marian "translators" for the offline demo and the tests.

No translation model can be downloaded offline. The demo therefore trains a 2-layer Marian
model as a *denoising copy model* on the demo's English prompt texts (stand-ins for the
slots, as the paraphrase stage writes them): its input is a sentence with words dropped or
swapped, its target the sentence itself. A round trip through two of them gives the seed
back plus beam variants with words dropped, repeated or swapped — noise with the shape of
paraphrases, which exercises every step of the stage but says nothing about paraphrasing.
"""

from __future__ import annotations

import io
import json
import logging
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ..config import schema_defaults
from ..demo_model import save_trained, staging_dir, training_step
from ..io import KnowprobeError, progress

log = logging.getLogger(__name__)

SPECIAL = ["</s>", "<unk>"]  # Marian's ids 0 and 1; <pad> goes last


_DEFAULTS = schema_defaults("lpaqa", "paraphrase", "forward", "train")


@dataclass(frozen=True)
class TinyTranslatorSettings:
    """A demo translator's ``train`` settings (less ``corpus_templates``, which the rule reads)."""

    d_model: int = _DEFAULTS["d_model"]
    layers: int = _DEFAULTS["layers"]
    heads: int = _DEFAULTS["heads"]
    steps: int = _DEFAULTS["steps"]
    batch_size: int = _DEFAULTS["batch_size"]
    learning_rate: float = _DEFAULTS["learning_rate"]
    noise: float = _DEFAULTS["noise"]  # chance that a word is dropped, and that a word swaps with its neighbour
    seed: int = _DEFAULTS["seed"]


def train_sentencepiece(texts: list[str], directory: Path, vocab_size: int | None = None) -> Path:
    """A unigram SentencePiece model over ``texts`` (as Marian's source.spm/target.spm)."""
    import sentencepiece as spm

    if not texts:
        raise KnowprobeError("no text to build a translation vocabulary from")
    words = {word for text in texts for word in text.split()}
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(texts),
        model_writer=model,
        model_type="unigram",
        vocab_size=vocab_size or len(words) + 40,
        hard_vocab_limit=False,
        character_coverage=1.0,
        unk_id=1,
        eos_id=0,
        bos_id=-1,
        pad_id=-1,
        minloglevel=2,
        num_threads=1,
    )
    path = directory / "source.spm"
    path.write_bytes(model.getvalue())
    return path


def make_tokenizer(texts: list[str], directory: str | Path):
    """A MarianTokenizer with one SentencePiece model for both sides, saved in ``directory``."""
    import sentencepiece as spm
    from transformers import MarianTokenizer

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    spm_path = train_sentencepiece(texts, directory)
    shutil.copyfile(spm_path, directory / "target.spm")
    processor = spm.SentencePieceProcessor(model_file=str(spm_path))
    pieces = [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
    vocab = SPECIAL + [piece for piece in pieces if piece not in SPECIAL] + ["<pad>"]
    (directory / "vocab.json").write_text(json.dumps({piece: i for i, piece in enumerate(vocab)}))
    tokenizer = MarianTokenizer(
        source_spm=str(spm_path), target_spm=str(directory / "target.spm"), vocab=str(directory / "vocab.json")
    )
    if len(tokenizer) != len(vocab):
        raise RuntimeError(f"tokenizer has {len(tokenizer)} tokens, vocabulary {len(vocab)}")
    return tokenizer


def make_model(tokenizer, settings: TinyTranslatorSettings = TinyTranslatorSettings()):
    from transformers import MarianConfig, MarianMTModel

    torch.manual_seed(settings.seed)
    config = MarianConfig(
        vocab_size=len(tokenizer),
        d_model=settings.d_model,
        encoder_layers=settings.layers,
        decoder_layers=settings.layers,
        encoder_attention_heads=settings.heads,
        decoder_attention_heads=settings.heads,
        encoder_ffn_dim=4 * settings.d_model,
        decoder_ffn_dim=4 * settings.d_model,
        max_position_embeddings=128,
        dropout=0.0,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
        forced_eos_token_id=tokenizer.eos_token_id,
    )
    return MarianMTModel(config).eval()


def noisy(words: list[str], rng: np.random.Generator, rate: float) -> list[str]:
    kept = [w for w in words if rng.random() >= rate] or words
    for i in range(len(kept) - 1):
        if rng.random() < rate:
            kept[i], kept[i + 1] = kept[i + 1], kept[i]
    return kept


def train(
    texts: list[str], out_dir: str | Path, settings: TinyTranslatorSettings = TinyTranslatorSettings(), threads: int = 1
) -> dict:
    """Train a denoising copy model on ``texts`` and save it with its tokenizer (atomically)."""
    torch.manual_seed(settings.seed)
    torch.set_num_threads(threads)
    rng = np.random.default_rng(settings.seed)
    staging = staging_dir(out_dir)  # the tokenizer's files are written there first
    texts = sorted(set(texts))
    tokenizer = make_tokenizer(texts, staging)
    model = make_model(tokenizer, settings)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / 50) * max(0.0, 1 - step / settings.steps)
    )
    log.info(
        "training a %d-layer Marian denoising copy model, not a translator (%d parameters, vocabulary %d) "
        "on %d texts for %d steps",
        settings.layers,
        sum(p.numel() for p in model.parameters()),
        len(tokenizer),
        len(texts),
        settings.steps,
    )
    losses = []
    for step in progress(range(settings.steps), unit="step", desc="train"):
        chosen = [texts[i] for i in rng.choice(len(texts), size=settings.batch_size, replace=True)]
        sources = [" ".join(noisy(t.split(), rng, settings.noise)) for t in chosen]
        batch = tokenizer(sources, text_target=chosen, return_tensors="pt", padding=True)
        batch["labels"][batch["labels"] == tokenizer.pad_token_id] = -100
        losses.append(training_step(model, optimizer, schedule, model(**batch).loss))
        if (step + 1) % 100 == 0:
            log.info("step %d: mean loss of the last 100 steps %.3f", step + 1, np.mean(losses[-100:]))
    summary = {
        "texts": len(texts),
        "vocabulary": len(tokenizer),
        "steps": settings.steps,
        "first_loss": losses[0],
        "final_loss": float(np.mean(losses[-50:])),
    }
    save_trained(model, tokenizer, out_dir, summary)
    return summary
