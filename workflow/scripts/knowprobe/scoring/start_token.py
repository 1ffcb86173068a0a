"""The token a causal model reads before a text: which one, by one rule for every tokenizer.

A causal LM predicts each token from the ones before it, so a text's first word is scored in
context only after some token the model saw texts begin with. The authors' code for GPT-2 put
its ``<|endoftext|>`` first (S-TEST's GPT-2 connector: ``config.bos_token_id``; lm-pub-quiz,
BEAR's scorer: ``ensure_bos_token_added`` adds ``tokenizer.bos_token``): for GPT-2 that token is
BOS, EOS and the separator between the documents it was trained on, all at once. Other tokenizers
split those roles (SmolLM2-Instruct's BOS is ``<|im_start|>``, a chat turn's opener; its
documents were separated by ``<|endoftext|>``, there its unknown token), so "the tokenizer's BOS"
does not carry GPT-2's meaning over. ``auto`` carries the meaning, the text boundary the model
was trained on, by this rule (first that applies):

1. the special token the tokenizer itself puts before a text (``add_special_tokens=True``):
   Llama's ``<s>``, Llama-3's ``<|begin_of_text|>``, Gemma's ``<bos>``, OPT's ``</s>``: the
   model was trained on texts that begin with it;
2. ``<|endoftext|>``, where the vocabulary has it as a special token: GPT-2's document separator,
   kept by the families that took GPT-2's conventions (GPT-J, GPT-NeoX and Pythia, Falcon, Phi,
   Qwen2, SmolLM2), whatever a chat model renamed its BOS and EOS to;
3. the tokenizer's BOS, else its EOS (lm-evaluation-harness's prefix token, in its order);
4. none.

``bos``, ``eos``, ``none`` or a token of the vocabulary (``"<|endoftext|>"``) choose one
directly. The setting is per model (``models.NAME.start_token``, else ``scoring.start_token``);
docs/scoring.md shows what it changes on SmolLM2.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..io import KnowprobeError

START_TOKEN_CHOICES = ("auto", "bos", "eos", "none")
DOCUMENT_SEPARATOR = "<|endoftext|>"


@dataclass(frozen=True)
class StartToken:
    """The start token a causal scorer uses: its ids ([] or one), its text and how it was chosen."""

    ids: tuple[int, ...]
    token: str | None
    setting: str
    rule: str

    @property
    def label(self) -> str:
        """How rows and logs name it: ``<|endoftext|> (auto: the document separator)``, ``none``."""
        if self.token is None:
            return f"none ({self.setting}: {self.rule})" if self.setting != "none" else "none"
        if self.setting == "auto":
            return f"{self.token} (auto: {self.rule})"
        return f"{self.token} ({self.setting})"


def special_token_id(tokenizer, token: str) -> int | None:
    """The id of ``token`` where the tokenizer has it as a token of its own (not mapped to its
    unknown token), else None."""
    token_id = tokenizer.convert_tokens_to_ids(token)
    if token_id is None or isinstance(token_id, list):
        return None
    if token_id == tokenizer.unk_token_id and token != str(tokenizer.unk_token):
        return None
    return int(token_id)


def prepended_token(tokenizer) -> int | None:
    """The special token the tokenizer puts before a text of its own accord, or None."""
    try:
        plain = tokenizer("a", add_special_tokens=False)["input_ids"]
        special = tokenizer("a", add_special_tokens=True)["input_ids"]
    except Exception:  # a tokenizer that cannot add its special tokens adds none
        return None
    if len(special) > len(plain) and special[len(special) - len(plain) :] == plain:
        first = special[0]
        if first in set(tokenizer.all_special_ids):
            return int(first)
    return None


def resolve_start_token(tokenizer, setting: str = "auto") -> StartToken:
    """The start token ``setting`` (``auto``, ``bos``, ``eos``, ``none`` or a token) names for
    this tokenizer (module docstring)."""
    setting = "auto" if setting is None else str(setting)

    def chosen(token_id: int | None, rule: str) -> StartToken:
        if token_id is None:
            return StartToken((), None, setting, rule)
        return StartToken((int(token_id),), tokenizer.convert_ids_to_tokens(int(token_id)), setting, rule)

    if setting == "none":
        return chosen(None, "no start token")
    if setting in ("bos", "eos"):
        token_id = getattr(tokenizer, f"{setting}_token_id")
        if token_id is None:
            raise KnowprobeError(
                f"start_token: {setting}, but the tokenizer has no {setting.upper()} token; "
                "choose auto, bos, eos, none or a token of its vocabulary"
            )
        return chosen(token_id, f"the tokenizer's {setting.upper()}")
    if setting != "auto":
        token_id = special_token_id(tokenizer, setting)
        if token_id is None:
            raise KnowprobeError(
                f"start_token: {setting!r} is not a token of the tokenizer's vocabulary; "
                "choose auto, bos, eos, none or one of its tokens"
            )
        return chosen(token_id, "named")
    token_id = prepended_token(tokenizer)
    if token_id is not None:
        return chosen(token_id, "the token the tokenizer puts first")
    separator = special_token_id(tokenizer, DOCUMENT_SEPARATOR)
    if separator is not None and separator in set(tokenizer.all_special_ids):
        return chosen(separator, "the document separator")
    if tokenizer.bos_token_id is not None:
        return chosen(tokenizer.bos_token_id, "the tokenizer's BOS")
    if tokenizer.eos_token_id is not None:
        return chosen(tokenizer.eos_token_id, "the tokenizer's EOS")
    return chosen(None, "the tokenizer has no BOS, EOS or <|endoftext|>")


def start_token_of(model_dir, setting: str = "auto") -> str:
    """The label of the start token a saved causal model reads under ``setting`` (its tokenizer
    alone is loaded): what tables name beside the numbers its probe produced."""
    from ..models import load_tokenizer

    return resolve_start_token(load_tokenizer(model_dir, "causal"), setting).label
