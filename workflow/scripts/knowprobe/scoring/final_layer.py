"""A masked LM's last layer computed only at the positions its head reads.

Every part of a transformer layer except attention works on each position alone, and attention
needs every position only for its keys and values. A masked LM's scores read one position of
each sequence (the mask of LAMA's probe, the masked token of a pseudo-log-likelihood copy) or a
few (the masks of open decoding and of the mLAMA score), so in the last layer the query, the
attention's output projection and the feed-forward block need to run there only: for L tokens
that leaves 2 of the last layer's 12 hidden² products per token at the other positions. With one
read of L = 12 that is 6% of BERT-base's encoder (12 layers), 3% of BERT-large's (24) and 13% of
a 6-layer model's. The result is the full forward's at the read positions (to float rounding: the
products run over other shapes). A row read at several positions gives each its own query, and
the attention reads that row's keys and values.

Known for the families whose layers are BERT's (BERT, RoBERTa, XLM-R, CamemBERT, ELECTRA),
DistilBERT's and ALBERT's (whose layers are one module run again and again: its last run is the
one computed at the read positions); other models run their full last layer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch
import torch.nn.functional as F

# base models whose encoder layers are BERT's (attention.self, attention.output, intermediate,
# output) or DistilBERT's (attention, sa_layer_norm, ffn, output_layer_norm)
BERT_LAYERS = {"BertModel", "RobertaModel", "XLMRobertaModel", "CamembertModel", "ElectraModel"}
DISTILBERT_LAYERS = {"DistilBertModel"}
ALBERT_LAYERS = {"AlbertModel"}


@dataclass
class FinalLayer:
    """Where a model keeps its encoder layers, and its last layer's output at given positions:
    ``at_positions(hidden, attention_mask, rows, at) -> [rows, hidden size]``. ``runs``: how many
    times a forward calls the module ``layers[-1]`` (ALBERT's shared layer: once per layer of its
    group), the last of them being the last layer."""

    layers: torch.nn.ModuleList
    at_positions: Callable[[torch.Tensor, torch.Tensor | None, torch.Tensor, torch.Tensor], torch.Tensor]
    runs: int = 1


def attend_at(attention, query, key, value, hidden, mask, rows, at) -> torch.Tensor:
    """Self-attention's output (before its output projection) at the (row, position) pairs
    ``rows``, ``at`` (a row may come several times): the query there, keys and values everywhere;
    ``mask`` is the model's [rows, 1, L, L] (boolean or additive) or None."""
    size = attention.attention_head_size
    q = query(hidden[rows, at]).view(len(rows), -1, 1, size)
    k = key(hidden).view(*hidden.shape[:2], -1, size).transpose(1, 2)
    v = value(hidden).view(*hidden.shape[:2], -1, size).transpose(1, 2)
    if len(rows) != len(hidden) or not torch.equal(rows, torch.arange(len(hidden), device=rows.device)):
        k, v = k[rows], v[rows]  # each pair's own row's keys and values (projected once a row)
    if mask is not None:
        mask = mask.expand(len(hidden), -1, -1, -1)  # a mask shared by the batch may come as [1, 1, ., L]
        # the query's row of the mask: [pairs, 1, 1, L]
        mask = mask[rows, :, at][:, :, None, :] if mask.shape[2] != 1 else mask[rows]
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=getattr(attention, "scaling", size**-0.5))
    return out.reshape(len(rows), -1)


def bert_at(layer) -> Callable:
    attention = layer.attention.self

    def at_positions(hidden, mask, rows, at):
        attended = attend_at(attention, attention.query, attention.key, attention.value, hidden, mask, rows, at)
        return layer.feed_forward_chunk(layer.attention.output(attended, hidden[rows, at]))

    return at_positions


def distilbert_at(layer) -> Callable:
    attention = layer.attention

    def at_positions(hidden, mask, rows, at):
        attended = attend_at(attention, attention.q_lin, attention.k_lin, attention.v_lin, hidden, mask, rows, at)
        attended = layer.sa_layer_norm(attention.out_lin(attended) + hidden[rows, at])
        return layer.output_layer_norm(layer.ffn(attended) + attended)

    return at_positions


def albert_at(layer) -> Callable:
    attention = layer.attention

    def at_positions(hidden, mask, rows, at):
        attended = attend_at(attention, attention.query, attention.key, attention.value, hidden, mask, rows, at)
        attended = attention.LayerNorm(hidden[rows, at] + attention.dense(attended))
        return layer.full_layer_layer_norm(layer.ff_chunk(attended) + attended)

    return at_positions


def albert_runs(config) -> int:
    """How many of ALBERT's layers its last group computes (AlbertTransformer's group index)."""
    layers, groups = config.num_hidden_layers, config.num_hidden_groups
    return sum(int(i / (layers / groups)) == groups - 1 for i in range(layers))


def final_layer(model) -> FinalLayer | None:
    """The model's last layer as a FinalLayer, or None where its family is not known (or a
    decoder, or with relative positions, which this attention does not add)."""
    base = model.base_model
    config = getattr(base, "config", None)
    if getattr(config, "is_decoder", False) or getattr(config, "position_embedding_type", "absolute") != "absolute":
        return None
    name = type(base).__name__
    if name in BERT_LAYERS:
        layers = base.encoder.layer
        return FinalLayer(layers, bert_at(layers[-1]))
    if name in DISTILBERT_LAYERS:
        layers = base.transformer.layer
        return FinalLayer(layers, distilbert_at(layers[-1]))
    if name in ALBERT_LAYERS:
        layers = base.encoder.albert_layer_groups[-1].albert_layers
        return FinalLayer(layers, albert_at(layers[-1]), runs=albert_runs(config))
    return None


class AtPositions(torch.nn.Module):
    """Stands in for the last layer during one forward: its output at ``at`` of each row, the
    other positions keeping the previous layer's states (which no head reads). Where the module
    runs several times (ALBERT), the runs before the last are the module's own."""

    def __init__(self, original: torch.nn.Module, final: FinalLayer, rows: torch.Tensor, at: torch.Tensor):
        super().__init__()
        self.original, self.final, self.rows, self.at = original, final, rows, at
        self.runs_so_far = 0

    def forward(self, hidden_states, attention_mask=None, *args, **kwargs):
        if self.final.runs > 1:
            self.runs_so_far += 1
            if self.runs_so_far < self.final.runs:
                return self.original(hidden_states, attention_mask, *args, **kwargs)
        out = self.final.at_positions(hidden_states, attention_mask, self.rows, self.at)
        return hidden_states.index_put((self.rows, self.at), out)


@contextlib.contextmanager
def final_layer_at(final: FinalLayer | None, rows: torch.Tensor, at: torch.Tensor) -> Iterator[None]:
    """Within it, the model's forward computes its last layer at position ``at[i]`` of row
    ``rows[i]`` only (where ``final`` is None, everywhere, as usual)."""
    if final is None:
        yield
        return
    original = final.layers[-1]
    final.layers[-1] = AtPositions(original, final, rows, at)
    try:
        yield
    finally:
        final.layers[-1] = original
