"""Statement scoring (BEAR's score) against lm-pub-quiz 0.3.3, the library BEAR's numbers come
from: same models, same statements, same machine, in one run.

    python benchmarks/statement_scoring.py                     # CPU: GPT-2-small and BERT-base size
    python benchmarks/statement_scoring.py --kinds causal --instances 4 --answers 30
    python benchmarks/statement_scoring.py --bear resources/bear/repository --relations 8 --instances 2 \
        --tokenizer-vocab 700 --dtype bfloat16      # BEAR's own statements; knowprobe in bfloat16 too
    python benchmarks/statement_scoring.py --gguf SmolLM2-135M-Instruct.Q4_1.gguf \
        --bear ../shared/data/bear/BEAR --relations 8 --instances 2 --dtype bfloat16   # a real model
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
the models' vocabulary-sized heads are the real ones'). With ``--gguf FILE`` the model is a
real pretrained causal LM instead, with its own tokenizer (nothing trained), loaded by
knowprobe's loaders (``models.load_model``, ``load_tokenizer``: a GGUF file dequantized to
float32, or a ``save_pretrained`` folder); lm-pub-quiz runs that float32 model.

lm-pub-quiz runs as its README calls it: ``Evaluator.from_model(model, model_type=...)`` and
``evaluate_dataset(dataset, template_index=[0, 1, 2], batch_size=--lpq-batch, reduction="sum")``
(causal: ``ensure_bos_token_added=True``, its default; masked: ``pll_metric`` as ``--pll``).
knowprobe fills the same statements (``knowprobe.statements.fill_statement``) and scores them in
one call of ``statement_logprob`` (each distinct statement once; a causal model's statements in
packed rows sharing their token prefixes; the LM head only where a score is read; the
tokenizer's BOS first, as lm-pub-quiz) on its own copy of the model as ``scoring.load`` prepares
it (GPT-2's GELU in PyTorch's fused kernel, ``scoring.kernels``; lm-pub-quiz's model keeps
transformers' own). Each side runs ``--warmup`` rounds untimed, then ``--repeats`` rounds in
which each runs once in turn; each side's best run counts. Printed: the tokens each side runs
(lm-pub-quiz's padded, knowprobe's packed) and the ratio they set, the bound of an exact
scorer's ratio; statements per second of each, the ratio, the ratio of the CPU time each used
(the fairer figure on a shared machine, where another process's load stretches wall time) and
its share of that bound, the largest difference between their scores, and how many (instance,
template) decisions (the best answer, ties to the first) are equal.

A tokenizer that puts its BOS first itself and pads on the left (Gemma-3's) makes lm-pub-quiz
score a second ``<bos>`` in most groups (``second_bos``; docs/bear.md): those are counted and
what the second BOS does to the scores and decisions is printed, and lm-pub-quiz runs once more
with its tokenizer padding on the right, one BOS a statement as knowprobe, which the scores are
compared with. ``--dtype bfloat16`` adds knowprobe in bfloat16 with the scoring layer's float32
recheck as BEAR's probe runs it (lm-pub-quiz's model stays float32): its time, the recheck's
share of it, and the decisions bfloat16 changes from knowprobe's float32 without and with the
recheck. With ``--bear`` the rates are projected to the whole directory (all of BEAR: 628,497
statements), the recheck's part from a full run's sample and this draw's share of groups whose
two best answers lie within the recheck's bound (a projection, not a measurement).
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

from knowprobe.config import schema_defaults  # noqa: E402
from knowprobe.models import load_model, load_tokenizer  # noqa: E402
from knowprobe.scoring import CausalLM, MaskedLM, ScoringSettings, fuse_activations  # noqa: E402
from knowprobe.scoring.recheck import RECHECK_MIN_SAMPLE, recheck_groups  # noqa: E402
from knowprobe.statements import fill_statement  # noqa: E402

GPT2_VOCAB = 50_257
TEMPLATES = [
    "[X] was born in [Y].",
    "The birthplace of [X] is [Y].",
    "[Y] is the place where [X] was born.",
]
ONE_BOS = "lm-pub-quiz, one BOS (right padding)"
RECHECK = schema_defaults("bear", "scoring", "recheck")  # BEAR's: sample 2% of the groups, factor 4
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
    kind: str,
    model,
    tokenizer,
    directory: Path,
    codes: list[str],
    batch: int,
    pll: str,
    device: str,
    padding_side: str | None = None,
) -> np.ndarray:
    """lm-pub-quiz's summed scores, in the order relation (as ``codes``), instance, template, answer;
    ``padding_side`` set on its copy of the tokenizer where given ("right": one BOS, ``second_bos``)."""
    from lm_pub_quiz import Dataset, Evaluator

    options = {"pll_metric": pll} if kind == "masked" else {"ensure_bos_token_added": True}
    tokenizer = copy.deepcopy(tokenizer)  # it sets a missing pad token on the tokenizer it is given
    tokenizer.padding_side = padding_side or tokenizer.padding_side
    evaluator = Evaluator.from_model(
        model,
        model_type="MLM" if kind == "masked" else "CLM",
        tokenizer=tokenizer,
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


def with_recheck(low, exact, relations: list[dict], pll: str, seen: dict) -> np.ndarray:
    """knowprobe below float32 (``low``) with the scoring layer's float32 recheck as BEAR's probe
    runs it (``recheck_groups`` over the (instance, template) groups, bear.scoring.recheck's
    defaults), rescoring with ``exact``; ``seen`` gets the low precision's own scores, the
    recheck's report and its shortest CPU time."""
    texts = [s.text for s in statements(relations)]
    scores = low.statement_logprob(texts, pll=pll)
    start_cpu = time.process_time()
    checked, report = recheck_groups(
        scores,
        np.repeat(np.arange(len(group_sizes(relations))), group_sizes(relations)),
        lambda rows: exact.statement_logprob([texts[i] for i in rows], pll=pll),
        RECHECK["sample"],
        RECHECK["factor"],
    )
    seen.update(alone=scores, report=report)
    seen["cpu"] = min(seen.get("cpu", np.inf), time.process_time() - start_cpu)
    return checked


def group_sizes(relations: list[dict]) -> list[int]:
    """The statements of each (instance, template) group (one answer space), in scoring order."""
    return [len(r["answers"]) for r in relations for _ in r["facts"] for _ in r["templates"]]


def decisions(scores: np.ndarray, relations: list[dict]) -> np.ndarray:
    """Each (instance, template) group's best answer (ties: the first, as both tools)."""
    ends = np.cumsum(group_sizes(relations))
    return np.array([int(np.argmax(scores[end - size : end])) for end, size in zip(ends, group_sizes(relations))])


def top_two_gaps(scores: np.ndarray, relations: list[dict]) -> np.ndarray:
    """Each group's best score less its second best (inf where a group has one answer)."""
    ends = np.cumsum(group_sizes(relations))
    return np.array(
        [
            np.subtract(*np.sort(scores[end - size : end])[::-1][:2]) if size > 1 else np.inf
            for end, size in zip(ends, group_sizes(relations))
        ]
    )


def second_bos(tokenizer, relations: list[dict]) -> np.ndarray:
    """Per (instance, template) group, whether lm-pub-quiz scores a second BOS in each of its
    statements. Its encode tokenizes a group (an instance's answers under one template) at once,
    padded, with ``add_bos_token=True``, and adds the BOS as text where the first row does not open
    with it (``ensure_bos_token_added``); a tokenizer that then puts its BOS first itself and pads
    on the left (Gemma-3's) opens that row with a pad wherever it is not the group's longest, so
    every statement of the group reads ``<bos><bos>`` and the second is scored (docs/bear.md)."""
    sizes = group_sizes(relations)
    if tokenizer.padding_side != "left":
        return np.zeros(len(sizes), dtype=bool)
    tokenizer = copy.deepcopy(tokenizer)
    tokenizer.add_bos_token = True  # as lm-pub-quiz's encode sets it
    ids = tokenizer([s.text for s in statements(relations)], add_special_tokens=True)["input_ids"]
    if ids[0][:1] != [tokenizer.bos_token_id]:
        return np.zeros(len(sizes), dtype=bool)
    starts = np.cumsum([0, *sizes[:-1]])
    return np.array([len(ids[a]) < max(len(i) for i in ids[a : a + n]) for a, n in zip(starts, sizes)])


def bear_size(source: Path) -> tuple[int, int]:
    """The statements and (instance, template) groups of the whole BEAR-format directory."""
    metadata = json.loads((source / "metadata_relations.json").read_text())
    total = groups = 0
    for code, meta in metadata.items():
        path = source / f"{code}.jsonl"
        if path.exists():
            n = sum(1 for line in path.read_text().splitlines() if line.strip()) * len(meta["templates"])
            total, groups = total + n * len(meta["answer_space_labels"]), groups + n
    return total, groups


def tokens_run(scorer, relations: list[dict], pll: str, twice: np.ndarray) -> dict:
    """What each side computes: lm-pub-quiz's padded tokens (the statements of one instance and
    template padded to the longest, one more where it adds a second BOS: ``twice``, per group);
    knowprobe's tokens (causal: placed in packed rows; masked: the distinct copies' tokens). Their
    ratio is the bound of an exact scorer's ratio that the benchmark sets the measured one against
    (both sides pay about the same per token: docs/benchmarks.md)."""
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
    for answers, extra in zip(group_sizes(relations), twice):  # one instance and template: lm-pub-quiz's call
        group_lengths, group_copies = lengths[start : start + answers], copies[start : start + answers]
        padded += (int(group_lengths.max()) + int(extra)) * int(group_copies.sum())
        start += answers
    return {"statements": len(texts), "knowprobe tokens": ours, "lm-pub-quiz tokens (padded)": padded}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kinds", nargs="+", default=["causal", "masked"], choices=["causal", "masked"])
    parser.add_argument(
        "--bear", type=Path, default=None, help="a real BEAR-format directory to sample instead of made-up words"
    )
    parser.add_argument(
        "--gguf",
        type=Path,
        default=None,
        help="a real causal model: its GGUF file (or a save_pretrained folder), with its own tokenizer, "
        "in place of the random models (--kinds, --layers, --hidden, --vocab, --tokenizer-vocab unused)",
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
        help="knowprobe's precision; bfloat16 adds a side in bfloat16 with the float32 recheck "
        "(lm-pub-quiz runs the float32 model as its README does)",
    )
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds before the timed ones")
    parser.add_argument("--repeats", type=int, default=2, help="timed rounds (each side's best counts)")
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
        size = f"{args.gguf}" if args.gguf else f"{args.layers} layers, hidden {args.hidden}"
        print(
            f"{len(relations)} relations x {args.instances} instances x 3 templates, {shape}; "
            f"{size}; {args.device}, {torch.get_num_threads()} threads"
        )
        for kind in ["causal"] if args.gguf else args.kinds:
            texts = corpus(relations)
            if args.gguf:  # knowprobe's loaders (scoring.load's, less its kernels: lm-pub-quiz keeps transformers')
                model = load_model(args.gguf, "causal", torch.float32)
                tokenizer = load_tokenizer(args.gguf, "causal", start_token=True)
            else:
                model, tokenizer = build(kind, texts, args.layers, args.hidden, args.vocab, args.tokenizer_vocab)
            words = sum(len(text.split()) for text in texts)
            pieces = sum(len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"])
            model = model.to(args.device)
            # knowprobe's side: its own copy, as scoring.load makes it (fused GELU), in float32 and
            # where asked in bfloat16 (the float32 copy then rechecks it)
            scorers = {}
            for dtype in dict.fromkeys(["float32", args.dtype]):
                ours = copy.deepcopy(model).to(getattr(torch, dtype))
                fuse_activations(ours)
                # causal: the tokenizer's BOS first, the token lm-pub-quiz's ensure_bos_token_added puts
                # (SmolLM2's <|im_start|>; the default, auto, would read <|endoftext|> there)
                settings = ScoringSettings(device=args.device, dtype=dtype, start_token="bos")
                scorers[dtype] = (CausalLM if kind == "causal" else MaskedLM)(ours, tokenizer, settings)
            twice = (
                second_bos(tokenizer, relations) if kind == "causal" else np.zeros(len(group_sizes(relations)), bool)
            )
            print(
                f"\n{kind} ({type(model).__name__}, vocabulary {model.config.vocab_size}; "
                f"tokenizer of {len(tokenizer)} tokens, {pieces / words:.2f} tokens a word): ",
                end="",
            )
            tokens = tokens_run(scorers["float32"], relations, args.pll, twice)
            bound = tokens["lm-pub-quiz tokens (padded)"] / tokens["knowprobe tokens"]
            print(", ".join(f"{k} {v:,}" for k, v in tokens.items()) + f"; the bound they set: {bound:.2f}x")
            seen = {}
            lm_pub_quiz = functools.partial(
                with_lm_pub_quiz,
                kind,
                model,
                tokenizer,
                directory,
                [r["code"] for r in relations],
                args.lpq_batch,
                args.pll,
                args.device,
            )
            sides = {"lm-pub-quiz": lm_pub_quiz}
            if twice.any():  # the same statements with one BOS each, to compare the scores with
                sides[ONE_BOS] = functools.partial(lm_pub_quiz, padding_side="right")
            sides["knowprobe float32"] = functools.partial(with_knowprobe, scorers["float32"], relations, args.pll)
            if args.dtype != "float32":
                sides[f"knowprobe {args.dtype} + recheck"] = functools.partial(
                    with_recheck, scorers[args.dtype], scorers["float32"], relations, args.pll, seen
                )
            best, cpu, scores = {}, {}, {}
            for round_ in range(args.warmup + args.repeats):  # untimed first: allocator, thread pools, kernels
                if round_ == args.warmup:
                    seen.pop("cpu", None)  # the recheck's time: of the timed rounds only
                for name, run in sides.items():
                    if args.device.startswith("cuda"):
                        torch.cuda.synchronize()
                    start, start_cpu = time.perf_counter(), time.process_time()
                    scores[name] = run()
                    if args.device.startswith("cuda"):
                        torch.cuda.synchronize()
                    if round_ >= args.warmup:
                        best[name] = min(best.get(name, np.inf), time.perf_counter() - start)
                        cpu[name] = min(cpu.get(name, np.inf), time.process_time() - start_cpu)
            report_run(args, relations, sides, best, cpu, scores, seen, twice, bound)


def report_run(args, relations, sides, best, cpu, scores, seen, twice, bound) -> None:
    """Print each side's rate and ratio to lm-pub-quiz, their scores' agreement with lm-pub-quiz's
    on statements of one BOS (``ONE_BOS`` where lm-pub-quiz as it runs scores a second one), what
    the second BOS changes, the recheck's share and, with --bear, the projected time of the whole
    of BEAR."""
    theirs = scores.get(ONE_BOS, scores["lm-pub-quiz"])
    n, one = len(theirs), ~twice if ONE_BOS not in scores else np.ones(len(twice), dtype=bool)
    one_bos = np.repeat(one, group_sizes(relations))
    chosen = {name: decisions(values, relations) for name, values in scores.items()}
    for name in sides:
        line = f"  {name:36s} {best[name]:8.2f} s  {n / best[name]:8.1f} statements/s  (CPU time {cpu[name]:.2f} s)"
        if name.startswith("knowprobe"):
            wall, cpu_ratio = best["lm-pub-quiz"] / best[name], cpu["lm-pub-quiz"] / cpu[name]
            line += (
                f"\n  {'':36s} ratio {wall:.2f}x (CPU time {cpu_ratio:.2f}x: {cpu_ratio / bound:.0%} of the bound "
                f"{bound:.2f}x); largest |difference| {np.abs(scores[name] - theirs)[one_bos].max():.2e}, "
                f"{int((chosen[name] == chosen[ONE_BOS if ONE_BOS in scores else 'lm-pub-quiz'])[one].sum()):,} "
                f"of {int(one.sum()):,} decisions equal (one BOS each side)"
            )
        print(line)
    if twice.any():
        shift = (scores["lm-pub-quiz"] - scores["knowprobe float32"])[np.repeat(twice, group_sizes(relations))]
        print(
            f"  lm-pub-quiz as it runs scored a second BOS in {int(twice.sum()):,} of {len(twice):,} groups (left "
            f"padding): there {-shift.mean():.2f} below knowprobe's float32 on average ({-shift.max():.2f} to "
            f"{-shift.min():.2f}), {int((chosen['knowprobe float32'] == chosen['lm-pub-quiz'])[twice].sum()):,} of "
            f"{int(twice.sum()):,} decisions equal"
        )
    low = next((name for name in sides if name.endswith("+ recheck")), None)
    if low:
        report, exact = seen["report"], chosen["knowprobe float32"]
        near = int((top_two_gaps(seen["alone"], relations) <= report.bound).sum())
        print(
            f"  {report.describe()}\n  the recheck took {seen['cpu']:.2f} CPU-s, {seen['cpu'] / cpu[low]:.0%} of "
            f"its side's; decisions differing from knowprobe's float32: "
            f"{int((decisions(seen['alone'], relations) != exact).sum())} without the recheck, "
            f"{int((chosen[low] != exact).sum())} with it, of {len(exact):,}; {near:,} groups have their two best "
            f"within the bound {report.bound:.3g}"
        )
    if args.bear:
        total, groups = bear_size(args.bear)
        per = {name: cpu[name] / n for name in sides}
        hours = {name: total * per[name] / 3600 for name in sides}
        if low:  # the low precision alone, and a full run's recheck: its sample, and every near group whole
            sample = min(groups, max(RECHECK_MIN_SAMPLE, int(np.ceil(RECHECK["sample"] * groups)))) / groups
            rechecked = min(1.0, sample + near / len(twice)) * total * per["knowprobe float32"] / 3600
            hours[low] = total * (cpu[low] - seen["cpu"]) / n / 3600 + rechecked
        print(
            f"  PROJECTION for all of {args.bear} ({total:,} statements, {groups:,} groups) from this draw's CPU "
            "time a statement, one thread: "
            + ", ".join(f"{name} {value:.1f} h" for name, value in hours.items())
            + (
                f" (the recheck's part {rechecked:.1f} h: a {sample:.1%} sample and this draw's share of near "
                "groups, rescored whole)"
                if low
                else ""
            )
        )


if __name__ == "__main__":
    main()
