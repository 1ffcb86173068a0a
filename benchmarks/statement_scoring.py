"""Statement scoring (BEAR's score) against lm-pub-quiz 0.3.3, the library BEAR's numbers come
from: same models, same statements, same machine, in one run.

    python benchmarks/statement_scoring.py                     # CPU: GPT-2-small and BERT-base size
    python benchmarks/statement_scoring.py --kinds causal --instances 4 --answers 30
    python benchmarks/statement_scoring.py --bear resources/bear/repository --relations 8 --instances 2 \
        --tokenizer-vocab 700 --dtype bfloat16      # BEAR's own statements; knowprobe in bfloat16
    python benchmarks/statement_scoring.py --device cuda --layers 32 --hidden 4096 ...

With ``--bear`` (BEAR's directory, as the workflow unpacks it), the workload is ``--relations``
of BEAR's relations drawn at random, ``--instances`` of each one's instances, its three
templates and its whole answer space, and the tokenizer is trained on those statements
(``--tokenizer-vocab`` sets how finely it splits words; the tokens a word it gives is printed:
GPT-2's own tokenizer, which cannot be downloaded here, splits BEAR's names more finely than one
trained on them with a large vocabulary). Otherwise the workload is a BEAR-format directory
written by the script: ``--relations`` relations with
three templates each in BEAR's style (the answer at the end of two, at the start of one),
``--instances`` subjects each and an answer space of ``--answers`` objects of one to three
made-up words (``--seed``), so that answers run to several tokens as BEAR's do. Every instance
is scored with every template and every answer: instances x templates x answers statements.
The models are randomly initialised at GPT-2-small size (12 layers, hidden 768, GPT-2's
vocabulary of 50,257) and BERT-base size (12, 768, BERT-base-cased's 28,996), their fast
tokenizers byte-level BPE and WordPiece trained on the workload's words (a few hundred tokens;
the models' vocabulary-sized heads are the real ones').

lm-pub-quiz runs as its README calls it: ``Evaluator.from_model(model, model_type=...)`` and
``evaluate_dataset(dataset, template_index=[0, 1, 2], batch_size=--lpq-batch, reduction="sum")``
(causal: ``ensure_bos_token_added=True``, its default; masked: ``pll_metric`` as ``--pll``).
knowprobe fills the same statements (``knowprobe.statements.fill_statement``) and scores them in
one call of ``statement_logprob`` (each distinct statement once; a causal model's statements in
packed rows sharing their token prefixes; the LM head only where a score is read) on its own copy
of the model as ``scoring.load`` prepares it (GPT-2's GELU in PyTorch's fused kernel,
``scoring.kernels``; lm-pub-quiz's model keeps transformers' own). Each side runs
once untimed, then ``--repeats`` rounds in which each runs once in turn; each side's best run
counts. Printed: statements per second of each, the ratio, the ratio of the CPU time each used
(the fairer figure on a shared machine, where another process's load stretches wall time), and
the largest difference between their scores, and how many (instance, template) decisions
(the best answer, ties to the first) are equal. ``--dtype bfloat16`` runs knowprobe's side on a
bfloat16 copy of the model (lm-pub-quiz's stays float32), to measure what that precision gains
and what it changes.
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import logging
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))

from _models import BERT_BASE_CASED_VOCAB  # noqa: E402

from knowprobe.scoring import CausalLM, MaskedLM, ScoringSettings, fuse_activations  # noqa: E402
from knowprobe.statements import fill_statement  # noqa: E402

GPT2_VOCAB = 50_257
TEMPLATES = [
    "[X] was born in [Y].",
    "The birthplace of [X] is [Y].",
    "[Y] is the place where [X] was born.",
]
SYLLABLES = ["ka", "lo", "mi", "ren", "do", "sta", "vel", "quor", "an", "tis", "bur", "gen", "ol", "ri", "um", "ex"]


def made_up_words(n: int, rng: np.random.Generator) -> list[str]:
    words = set()
    while len(words) < n:
        words.add("".join(rng.choice(SYLLABLES, size=rng.integers(2, 5))).capitalize())
    return sorted(words)


def write_bear(directory: Path, relations: int, instances: int, answers: int, seed: int) -> list[dict]:
    """A BEAR-format set (``metadata_relations.json`` and one JSON-lines file per relation); its
    relations as dicts of templates, answer space and (subject, gold answer) facts."""
    rng = np.random.default_rng(seed)
    words = made_up_words(4 * answers + 2 * instances, rng)
    out, metadata = [], {}
    for r in range(relations):
        code = f"P{r + 1}"
        space = sorted({" ".join(rng.choice(words, size=rng.integers(1, 4))) for _ in range(answers * 2)})
        space = [str(a) for a in rng.permutation(space)[:answers]]
        subjects = [" ".join(rng.choice(words, size=2)) for _ in range(instances)]
        facts = [(subject, space[int(rng.integers(answers))]) for subject in subjects]
        ids = [f"{code}-Q{i}" for i in range(answers)]
        metadata[code] = {"templates": TEMPLATES, "answer_space_labels": space, "answer_space_ids": ids}
        with open(directory / f"{code}.jsonl", "w") as lines:
            for k, (subject, answer) in enumerate(facts):
                row = {"sub_id": f"{code}-S{k}", "sub_label": subject, "obj_id": ids[space.index(answer)]}
                lines.write(json.dumps({**row, "obj_label": answer}) + "\n")
        out.append({"code": code, "templates": TEMPLATES, "answers": space, "facts": facts})
    (directory / "metadata_relations.json").write_text(json.dumps(metadata))
    return out


def sample_bear(source: Path, directory: Path, relations: int, instances: int, seed: int) -> list[dict]:
    """``relations`` relations of a real BEAR-format directory (``--bear``) drawn at random, each
    with ``instances`` of its instances drawn at random and its whole answer space, written to
    ``directory`` as a BEAR-format set (the one lm-pub-quiz reads); as ``write_bear`` returns."""
    rng = np.random.default_rng(seed)
    metadata = json.loads((source / "metadata_relations.json").read_text())
    codes = sorted(code for code in metadata if (source / f"{code}.jsonl").exists())
    chosen = sorted(str(code) for code in rng.choice(codes, size=min(relations, len(codes)), replace=False))
    out = []
    for code in chosen:
        rows = [json.loads(line) for line in (source / f"{code}.jsonl").read_text().splitlines() if line.strip()]
        rows = [rows[int(i)] for i in sorted(rng.choice(len(rows), size=min(instances, len(rows)), replace=False))]
        with open(directory / f"{code}.jsonl", "w") as lines:
            lines.writelines(json.dumps(row) + "\n" for row in rows)
        meta = metadata[code]
        out.append(
            {
                "code": code,
                "templates": meta["templates"],
                "answers": meta["answer_space_labels"],
                "facts": [(row["sub_label"], row["obj_label"]) for row in rows],
            }
        )
    (directory / "metadata_relations.json").write_text(json.dumps({code: metadata[code] for code in chosen}))
    return out


def corpus(relations: list[dict]) -> list[str]:
    return [fill_statement(t, s, a).text for r in relations for s, a in r["facts"] for t in r["templates"]] + [
        fill_statement(t, "X", a).text for r in relations for a in r["answers"] for t in r["templates"]
    ]


def build(kind: str, texts: list[str], layers: int, hidden: int, vocab: int | None, tokenizer_vocab: int = 600):
    """A random model of the given size and a fast tokenizer of at most ``tokenizer_vocab`` tokens
    trained on ``texts``."""
    from tokenizers import BertWordPieceTokenizer, ByteLevelBPETokenizer, Tokenizer

    torch.manual_seed(0)
    if kind == "causal":
        from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

        trainer = ByteLevelBPETokenizer()
        trainer.train_from_iterator(
            texts, vocab_size=tokenizer_vocab, min_frequency=1, special_tokens=["<|endoftext|>"]
        )
        tokenizer = PreTrainedTokenizerFast(
            tokenizer_object=Tokenizer.from_str(trainer.to_str()),
            bos_token="<|endoftext|>",
            eos_token="<|endoftext|>",
            unk_token="<|endoftext|>",
        )
        config = GPT2Config(
            vocab_size=vocab or GPT2_VOCAB,
            n_embd=hidden,
            n_layer=layers,
            n_head=hidden // 64,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
        )
        return GPT2LMHeadModel(config).eval(), tokenizer
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    trainer = BertWordPieceTokenizer(lowercase=False)
    trainer.train_from_iterator(
        texts,
        vocab_size=tokenizer_vocab,
        min_frequency=1,
        special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
    )
    tokenizer = BertTokenizerFast(vocab=trainer.get_vocab(), do_lower_case=False)
    config = BertConfig(
        vocab_size=vocab or BERT_BASE_CASED_VOCAB,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=hidden // 64,
        intermediate_size=4 * hidden,
    )
    return BertForMaskedLM(config).eval(), tokenizer


def with_lm_pub_quiz(
    kind: str, model, tokenizer, directory: Path, codes: list[str], batch: int, pll: str, device: str
) -> np.ndarray:
    """lm-pub-quiz's summed scores, in the order relation (as ``codes``), instance, template, answer."""
    from lm_pub_quiz import Dataset, Evaluator

    options = {"pll_metric": pll} if kind == "masked" else {"ensure_bos_token_added": True}
    evaluator = Evaluator.from_model(
        model,
        model_type="MLM" if kind == "masked" else "CLM",
        tokenizer=copy.deepcopy(tokenizer),  # it sets a missing pad token on the tokenizer it is given
        device=device,
        **options,
    )
    results = evaluator.evaluate_dataset(
        Dataset.from_path(directory), template_index=[0, 1, 2], batch_size=batch, reduction="sum"
    )
    by_code = {r.relation_code: np.array(r.instance_table["pll_scores"].tolist()).ravel() for r in results}
    return np.concatenate([by_code[code] for code in codes])  # its relation order is its own


def statements(relations: list[dict]):
    return [
        fill_statement(template, subject, answer)
        for relation in relations
        for subject, _ in relation["facts"]
        for template in relation["templates"]
        for answer in relation["answers"]
    ]


def with_knowprobe(scorer, relations: list[dict], pll: str) -> np.ndarray:
    filled = statements(relations)
    return scorer.statement_logprob([s.text for s in filled], pll=pll)


def tokens_run(scorer, relations: list[dict], pll: str) -> dict:
    """What each side computes: lm-pub-quiz's padded tokens (the statements of one instance and
    template padded to the longest); knowprobe's tokens (causal: placed in packed rows; masked: the
    distinct copies' tokens)."""
    from knowprobe.scoring.causal import prefix_tree_rows

    filled = statements(relations)
    texts = [s.text for s in filled]
    if isinstance(scorer, CausalLM):
        ids, _ = scorer.encode(texts, scorer.statement_start)
        lengths = np.array([len(i) for i in ids])
        tree = prefix_tree_rows(ids, [1] * len(ids), scorer.packing_width(int(lengths.max())), scorer.pad_id, True)
        ours = int(tree.used.sum())
        copies = np.ones(len(ids), dtype=np.int64)
    else:
        encoded = scorer.tokenizer(texts, add_special_tokens=True)["input_ids"]
        lengths = np.array([len(i) for i in encoded])
        copies = lengths - 2

        def every_token(i, offsets, own):
            return [p for p, flag in enumerate(own) if flag]

        distinct, _, _ = scorer.masked_copies(texts, every_token, pll == "within_word_l2r", str)
        ours = sum(len(copy) for copy in distinct)
    padded, start = 0, 0
    groups = [len(r["answers"]) for r in relations for _ in r["facts"] for _ in r["templates"]]
    for answers in groups:  # one instance and template: lm-pub-quiz's call
        group_lengths, group_copies = lengths[start : start + answers], copies[start : start + answers]
        padded += int(group_lengths.max()) * int(group_copies.sum())
        start += answers
    return {"statements": len(texts), "knowprobe tokens": ours, "lm-pub-quiz tokens (padded)": padded}


def equal_decisions(ours: np.ndarray, theirs: np.ndarray, relations: list[dict]) -> tuple[int, int]:
    """Of the (instance, template) groups, how many pick the same answer (ties: the first, as
    both tools), and how many groups there are."""
    equal, start, groups = 0, 0, 0
    for relation in relations:
        size = len(relation["answers"])
        for _ in range(len(relation["facts"]) * len(relation["templates"])):
            window = slice(start, start + size)
            equal += int(np.argmax(ours[window]) == np.argmax(theirs[window]))
            start, groups = start + size, groups + 1
    return equal, groups


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kinds", nargs="+", default=["causal", "masked"], choices=["causal", "masked"])
    parser.add_argument(
        "--bear", type=Path, default=None, help="a real BEAR-format directory to sample instead of made-up words"
    )
    parser.add_argument(
        "--tokenizer-vocab", type=int, default=600, help="the size of the tokenizer trained on the workload's text"
    )
    parser.add_argument("--relations", type=int, default=2)
    parser.add_argument("--instances", type=int, default=2)
    parser.add_argument("--answers", type=int, default=25)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--vocab", type=int, default=None, help="the model's vocabulary (default: GPT-2's, BERT's)")
    parser.add_argument("--pll", default="within_word_l2r", choices=["within_word_l2r", "original"])
    parser.add_argument("--lpq-batch", type=int, default=32, help="lm-pub-quiz's batch_size (its README's 32)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--dtype",
        default="float32",
        choices=["float32", "bfloat16"],
        help="knowprobe's precision (lm-pub-quiz runs the float32 model as its README does)",
    )
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        if args.bear:
            relations = sample_bear(args.bear, directory, args.relations, args.instances, args.seed)
            spaces = sorted(len(r["answers"]) for r in relations)
            shape = f"{args.bear} ({', '.join(r['code'] for r in relations)}; answer spaces {spaces})"
        else:
            relations = write_bear(directory, args.relations, args.instances, args.answers, args.seed)
            shape = f"made-up words, answer spaces of {args.answers}"
        print(
            f"{len(relations)} relations x {args.instances} instances x 3 templates, {shape}; "
            f"{args.layers} layers, hidden {args.hidden}; {args.device}, {torch.get_num_threads()} threads"
        )
        for kind in args.kinds:
            texts = corpus(relations)
            model, tokenizer = build(kind, texts, args.layers, args.hidden, args.vocab, args.tokenizer_vocab)
            words = sum(len(text.split()) for text in texts)
            pieces = sum(len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"])
            model = model.to(args.device)
            # knowprobe's side: its own copy, as scoring.load makes it (fused GELU), in its precision
            ours = copy.deepcopy(model).to(getattr(torch, args.dtype))
            fuse_activations(ours)
            settings = ScoringSettings(device=args.device, dtype=args.dtype)
            scorer = CausalLM(ours, tokenizer, settings) if kind == "causal" else MaskedLM(ours, tokenizer, settings)
            print(
                f"\n{kind} ({type(model).__name__}, vocabulary {model.config.vocab_size}; "
                f"tokenizer of {len(tokenizer)} tokens, {pieces / words:.2f} tokens a word): ",
                end="",
            )
            print(", ".join(f"{k} {v:,}" for k, v in tokens_run(scorer, relations, args.pll).items()))
            sides = {
                "lm-pub-quiz": functools.partial(
                    with_lm_pub_quiz,
                    kind,
                    model,
                    tokenizer,
                    directory,
                    [r["code"] for r in relations],
                    args.lpq_batch,
                    args.pll,
                    args.device,
                ),
                "knowprobe": functools.partial(with_knowprobe, scorer, relations, args.pll),
            }
            best, cpu, scores = {}, {}, {}
            for name, run in sides.items():  # untimed: allocator, thread pools, kernel choice
                scores[name] = run()
            for _ in range(args.repeats):
                for name, run in sides.items():
                    if args.device.startswith("cuda"):
                        torch.cuda.synchronize()
                    start, start_cpu = time.perf_counter(), time.process_time()
                    run()
                    if args.device.startswith("cuda"):
                        torch.cuda.synchronize()
                    best[name] = min(best.get(name, np.inf), time.perf_counter() - start)
                    cpu[name] = min(cpu.get(name, np.inf), time.process_time() - start_cpu)
            n = len(scores["knowprobe"])
            difference = float(np.abs(scores["knowprobe"] - scores["lm-pub-quiz"]).max())
            for name in sides:
                print(
                    f"  {name:12s} {best[name]:8.2f} s  {n / best[name]:8.1f} statements/s  "
                    f"(CPU time {cpu[name]:.2f} s)"
                )
            ratio, cpu_ratio = best["lm-pub-quiz"] / best["knowprobe"], cpu["lm-pub-quiz"] / cpu["knowprobe"]
            equal, groups = equal_decisions(scores["knowprobe"], scores["lm-pub-quiz"], relations)
            print(
                f"  ratio {ratio:.2f}x (CPU time: {cpu_ratio:.2f}x); knowprobe in {args.dtype}: largest |difference| "
                f"{difference:.2e}, {equal:,} of {groups:,} decisions (instance x template) equal"
            )


if __name__ == "__main__":
    main()
