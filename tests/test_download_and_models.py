import http.server
import threading
import zipfile

import pytest

from knowprobe import download, models
from knowprobe.io import KnowprobeError

PAYLOAD = bytes(range(256)) * 4096  # 1 MiB


class RangeHandler(http.server.BaseHTTPRequestHandler):
    """Serves PAYLOAD at /data.zip, honouring 'Range: bytes=N-' unless the server says not to."""

    honour_range = True
    ranges: list = []

    def do_GET(self):
        if self.path != "/data.zip":
            self.send_error(404)
            return
        start = 0
        header = self.headers.get("Range")
        type(self).ranges.append(header)
        if header and self.honour_range:
            start = int(header.removeprefix("bytes=").rstrip("-"))
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(PAYLOAD) - 1}/{len(PAYLOAD)}")
        else:
            self.send_response(200)
        body = PAYLOAD[start:]
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    RangeHandler.ranges = []
    RangeHandler.honour_range = True
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), RangeHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_download_resumes_from_partial_file(server, tmp_path):
    dest = tmp_path / "data.zip"
    (tmp_path / "data.zip.part").write_bytes(PAYLOAD[:300_000])
    download.download(f"{server}/data.zip", dest)
    assert dest.read_bytes() == PAYLOAD
    assert RangeHandler.ranges == ["bytes=300000-"]
    assert not (tmp_path / "data.zip.part").exists()


def test_download_restarts_when_server_ignores_range(server, tmp_path):
    RangeHandler.honour_range = False
    (tmp_path / "data.zip.part").write_bytes(b"stale bytes")
    download.download(f"{server}/data.zip", tmp_path / "data.zip")
    assert (tmp_path / "data.zip").read_bytes() == PAYLOAD


def test_download_errors_name_the_url(server, tmp_path):
    with pytest.raises(KnowprobeError, match=r"download of .*/missing.zip failed: HTTP 404"):
        download.download(f"{server}/missing.zip", tmp_path / "x")
    with pytest.raises(KnowprobeError, match="nowhere.txt: file not found"):
        download.fetch(str(tmp_path / "nowhere.txt"), tmp_path / "y")


def test_the_space_a_run_downloads_is_summed_from_the_announced_sizes(server):
    # RangeHandler answers GET only: a HEAD request gets 501, and the size is unknown
    assert download.remote_size(f"{server}/data.zip") is None
    assert download.remote_size("http://127.0.0.1:9/nothing") is None  # nothing listens on port 9
    planned = [("dump.gz", 120 * 10**9, "resources/a"), ("model", 2 * 10**9, "resources/b"), ("unknown", None, "c")]
    assert download.space_needed(planned, 200 * 10**9, "resources/") is None
    line = download.space_needed(planned, 50 * 10**9, "resources/")
    assert line == (
        "resources/: 50.0 GB free, and this run downloads 122.0 GB (dump.gz 120.0 GB, model 2.0 GB, unknown 0.0 GB): "
        "free space, or give local copies (a path in the config)"
    )


def test_a_model_kind_is_checked_against_its_config():
    assert models.kind_problem({"model_type": "bert"}, "masked") is None
    assert models.kind_problem({"model_type": "gpt2"}, "causal") is None
    assert "it is a causal LM: kind: causal" in models.kind_problem({"model_type": "gpt2"}, "masked")
    assert "no masked LM of this type" in models.kind_problem({"model_type": "t5"}, "masked")
    assert models.kind_problem({}, "masked") == "its config.json names no model_type"
    # transformers maps bert, roberta, electra to causal classes too; a BERT checkpoint attends
    # both ways, so declared causal it would see the token it predicts: refused, with the fix
    for encoder in ("bert", "roberta", "electra"):
        assert "is an encoder" in models.kind_problem({"model_type": encoder}, "causal")
        assert "kind: masked" in models.kind_problem({"model_type": encoder}, "causal")
    assert models.kind_problem({"model_type": "bert", "is_decoder": True}, "causal") is None  # a BERT decoder


def test_unpack_lama_finds_the_data_folder(tmp_path):
    archive = tmp_path / "data.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("data/relations.jsonl", '{"relation": "P19", "template": "[X] was born in [Y] ."}\n')
        zipped.writestr("data/TREx/P19.jsonl", "")
        zipped.writestr("data/Google_RE/place_of_birth_test.jsonl", "")
    dest = download.unpack_lama(archive, tmp_path / "lama")
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*.jsonl")) == [
        "Google_RE/place_of_birth_test.jsonl",
        "TREx/P19.jsonl",
        "relations.jsonl",
    ]
    (tmp_path / "bad.zip").write_bytes(b"not a zip")
    with pytest.raises(KnowprobeError, match="bad.zip: not a zip archive"):
        download.unpack_lama(tmp_path / "bad.zip", tmp_path / "lama2")


def test_models_that_cannot_be_loaded_are_named(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(KnowprobeError, match="model 'no-such-org/no-such-model' .* cannot be fetched") as error:
        models.download_hub_model("no-such-org/no-such-model", "main", tmp_path / "m", name="mine")
    # the way to a local copy is named; offline is no reason to wait and try again
    assert "set models.mine.path to its directory" in str(error.value) and "\n" not in str(error.value)
    with pytest.raises(KnowprobeError, match=f"{tmp_path}: cannot load a tokenizer"):
        models.load_tokenizer(tmp_path, "masked")
    with pytest.raises(KnowprobeError, match=f"{tmp_path}: cannot load a masked language model"):
        models.load_model(tmp_path, "masked")
    with pytest.raises(KnowprobeError, match=f"{tmp_path}: cannot load a causal language model"):
        models.load_model(tmp_path, "causal")


def test_saved_model_round_trips(tmp_path, tiny_bert, wordpiece_tokenizer):
    tiny_bert.save_pretrained(tmp_path)
    wordpiece_tokenizer.save_pretrained(tmp_path)
    assert len(models.load_tokenizer(tmp_path, "masked")) == len(wordpiece_tokenizer)
    assert type(models.load_model(tmp_path, "masked")).__name__ == "BertForMaskedLM"


def test_unpack_lpaqa_tar_finds_the_jsonl_folder(tmp_path):
    import io
    import tarfile

    archive = tmp_path / "TREx_train.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        data = b'{"sub_uri": "Q1", "obj_uri": "Q2", "sub_label": "a", "obj_label": "b"}\n'
        info = tarfile.TarInfo("TREx_train/P19.jsonl")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    dest = download.unpack_lpaqa_trex_train(archive, tmp_path / "TREx_train")
    assert [p.name for p in dest.glob("*.jsonl")] == ["P19.jsonl"]
    (tmp_path / "empty.tar.gz").write_bytes(b"not a tar")
    with pytest.raises(KnowprobeError, match="empty.tar.gz: not a readable tar archive"):
        download.unpack_lpaqa_trex_train(tmp_path / "empty.tar.gz", tmp_path / "x")


@pytest.mark.parametrize("kind", ["masked", "causal"])
def test_demo_training_does_not_depend_on_the_thread_count(tmp_path, kind):
    """Issue 17 item 7: with two torch threads the weights differed from one thread's (~1e-6), and
    with them every demo table between --cores 1 and --cores 2."""
    import torch
    from safetensors.torch import load_file

    from knowprobe import demo_model

    sentences = [(f"city{i} lies in region{i % 7} .", 0, 5 + len(str(i))) for i in range(200)]
    settings = demo_model.TinyLMSettings(hidden_size=128, layers=2, heads=4, steps=40, batch_size=64)
    weights = []
    before = torch.get_num_threads()
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            demo_model.train(sentences, [], tmp_path / f"m{threads}", settings, kind=kind)
            assert torch.get_num_threads() == threads  # the caller's setting is given back
            weights.append(load_file(tmp_path / f"m{threads}" / "model.safetensors"))
    finally:
        torch.set_num_threads(before)
    assert weights[0].keys() == weights[1].keys()
    assert all(torch.equal(weights[0][name], weights[1][name]) for name in weights[0])


def test_saved_models_get_the_mode_of_every_other_output(tmp_path, tiny_bert, wordpiece_tokenizer):
    """save_pretrained writes model.safetensors at 0600; trained models and translators are
    shared results like the tables, so they follow the umask."""
    import os

    from knowprobe.demo_model import save_trained

    previous = os.umask(0o022)
    try:
        save_trained(tiny_bert, wordpiece_tokenizer, tmp_path / "model", {"steps": 0})
    finally:
        os.umask(previous)
    modes = {p.name: p.stat().st_mode & 0o777 for p in (tmp_path / "model").iterdir() if p.is_file()}
    assert "model.safetensors" in modes and set(modes.values()) == {0o644}, modes


def test_a_local_directory_without_a_model_is_named_before_any_job(tmp_path, tiny_bert, wordpiece_tokenizer):
    """Issue 28, item 1: `path: resources/demo` (a directory, no model) passed the dry run and failed
    hours later inside the probe with a misleading cause (sentencepiece not installed)."""
    assert "holds no config.json" in models.local_model_problem(tmp_path)
    tiny_bert.save_pretrained(tmp_path)
    assert "holds no tokenizer files" in models.local_model_problem(tmp_path)
    wordpiece_tokenizer.save_pretrained(tmp_path)
    assert models.local_model_problem(tmp_path) is None
    (tmp_path / "model.safetensors").unlink()
    assert "holds no weights" in models.local_model_problem(tmp_path)


def test_the_dry_run_refuses_a_model_path_that_holds_no_model(tmp_path):
    import yaml

    from conftest import copy_project, snakemake

    project = copy_project(tmp_path)
    path = project / "resources/demo/config.yaml"
    config = yaml.safe_load(path.read_text())
    config["models"]["local-bert"] = {"kind": "masked", "path": "resources/demo"}
    path.write_text(yaml.safe_dump(config))
    result = snakemake(project, "-n", "--configfile", "resources/demo/config.yaml", check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "config models.local-bert.path: resources/demo holds no config.json" in output


def drop_from_vocabulary(directory, token):
    """Take ``token`` out of a saved tokenizer's vocabulary (tokenizer.json's model and added
    tokens, vocab.txt), leaving tokenizer_config.json naming it, as a damaged or hand-edited copy."""
    import json

    path = directory / "tokenizer.json"
    saved = json.loads(path.read_text())
    saved["model"]["vocab"].pop(token)
    saved["added_tokens"] = [added for added in saved["added_tokens"] if added["content"] != token]
    path.write_text(json.dumps(saved))
    for name in ("vocab.txt", "vocab.json"):
        (directory / name).unlink(missing_ok=True)


def test_a_mask_token_outside_the_vocabulary_is_refused_at_load(tmp_path, tiny_bert, wordpiece_tokenizer):
    """Issue 44, item 5: with [MASK] taken out of tokenizer.json's vocabulary and
    tokenizer_config.json still naming it, transformers re-added it under the id of an ordinary
    word, and every masked score was silently wrong (rc 0)."""
    from knowprobe import scoring

    tiny_bert.save_pretrained(tmp_path)
    wordpiece_tokenizer.save_pretrained(tmp_path)
    drop_from_vocabulary(tmp_path, "[MASK]")
    word = wordpiece_tokenizer.convert_ids_to_tokens(len(wordpiece_tokenizer) - 1)
    expected = (
        f"{tmp_path}: the tokenizer's mask token '[MASK]' has id {len(wordpiece_tokenizer) - 1}, which is also the "
        f"id of {word!r}: its vocabulary (tokenizer.json, vocab.txt) lacks '[MASK]', and transformers added it "
        "under an ordinary word's id; the model cannot be scored with it"
    )
    with pytest.raises(KnowprobeError) as error:
        models.load_tokenizer(tmp_path, "masked")
    assert str(error.value) == expected
    with pytest.raises(KnowprobeError) as error:
        scoring.load(tmp_path, "masked")
    assert str(error.value) == expected


def test_a_bos_token_outside_the_vocabulary_is_refused_where_texts_start_with_it(tmp_path, tiny_causal_models):
    """The same for a causal model's BOS, where a study puts it before every text."""
    from knowprobe import scoring

    name, model, tokenizer = next(entry for entry in tiny_causal_models if entry[0] == "llama")
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    drop_from_vocabulary(tmp_path, "<s>")
    with pytest.raises(KnowprobeError, match=r"the tokenizer's bos token '<s>' has id \d+, which is also the id of"):
        scoring.load(tmp_path, "causal", start_token=True)
    assert scoring.load(tmp_path, "causal", start_token=False).start == []  # a study that starts without it


def test_every_test_models_special_tokens_have_ids_of_their_own(tmp_path, tiny_models, tiny_causal_models):
    """No false alarm: BERT's, RoBERTa's (<mask> absorbing a space), GPT-2's (BOS = EOS = UNK),
    Llama's and Qwen2's (no BOS) tokenizers pass, saved and loaded."""
    for name, model, tokenizer in tiny_models:
        tokenizer.save_pretrained(tmp_path / name)
        assert models.special_token_problem(models.load_tokenizer(tmp_path / name, "masked"), "mask") is None
        assert models.token_ids_problem(tokenizer, model, "masked") is None
    for name, model, tokenizer in tiny_causal_models:
        tokenizer.save_pretrained(tmp_path / name)
        loaded = models.load_tokenizer(tmp_path / name, "causal", start_token=True)
        assert loaded.bos_token is None or models.special_token_problem(loaded, "bos") is None
        assert models.token_ids_problem(tokenizer, model, "causal", start_token=True) is None


def test_a_mask_id_past_the_embeddings_is_refused(tmp_path, tiny_bert, wordpiece_tokenizer):
    """A mask token transformers adds after the last id of a contiguous vocabulary is an id of its
    own, but one the model has no embedding for."""
    import copy

    tokenizer = copy.deepcopy(wordpiece_tokenizer)
    tokenizer.add_special_tokens({"mask_token": "[NEWMASK]"})
    assert "past the model's" in models.token_ids_problem(tokenizer, tiny_bert, "masked")


@pytest.mark.parametrize(
    "text, problem",
    [
        ('{"model_type": "bert",\n', "not JSON (Expecting property name enclosed in double quotes, line 2 column 1)"),
        ("[1, 2]", "a JSON list, not an object"),
    ],
)
def test_a_config_json_that_is_not_json_is_one_line(tmp_path, tiny_bert, wordpiece_tokenizer, text, problem):
    """Issue 44, item 5: a config.json that is not JSON was a JSONDecodeError traceback in
    common.smk (check_model_kinds) as the DAG was built."""
    tiny_bert.save_pretrained(tmp_path)
    wordpiece_tokenizer.save_pretrained(tmp_path)
    (tmp_path / "config.json").write_text(text)
    assert models.local_model_problem(tmp_path) == (
        f"holds a config.json that is {problem}; a model's config.json is one JSON object"
    )
    with pytest.raises(KnowprobeError) as error:
        models.read_model_config(tmp_path / "config.json")
    assert str(error.value).startswith(f"{tmp_path / 'config.json'}: {problem}; ")


def test_the_dry_run_names_the_model_whose_downloaded_config_json_is_not_json(tmp_path, tiny_bert, wordpiece_tokenizer):
    import yaml

    from conftest import copy_project, snakemake

    project = copy_project(tmp_path / "project")
    downloaded = project / "resources/models/hub-bert"
    tiny_bert.save_pretrained(downloaded)
    wordpiece_tokenizer.save_pretrained(downloaded)
    (downloaded / "config.json").write_text('{"model_type": "bert",\n')
    path = project / "resources/demo/config.yaml"
    config = yaml.safe_load(path.read_text())
    config["models"]["hub-bert"] = {"kind": "masked", "hub_id": "org/hub-bert"}
    path.write_text(yaml.safe_dump(config))
    result = snakemake(project, "-n", "--configfile", "resources/demo/config.yaml", check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "JSONDecodeError" not in output
    assert (
        "model hub-bert: resources/models/hub-bert/config.json: not JSON (Expecting property name enclosed in "
        "double quotes, line 2 column 1)" in output
    )


@pytest.fixture
def files_server(tmp_path):
    """A loopback HTTP server of the files in tmp_path/served."""
    import functools

    root = tmp_path / "served"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", root
    httpd.shutdown()


def test_a_download_is_recorded_in_the_lock_file_and_held_to_it(files_server, tmp_path):
    """Issue 44, item 6: only the dumps were verified; LAMA's data.zip, the releases, the norms,
    WordNet and GloVe were used as they arrived. A file with no digest known in advance is
    recorded (SHA-256, size) on its first download; a later download, here or on another node with
    the same lock file, is held to it: a mismatch is one line naming the file and both digests."""
    import hashlib
    import json
    import shutil

    url, served = files_server
    (served / "data.zip").write_bytes(PAYLOAD)
    lock = tmp_path / "downloads.lock.json"
    checks = download.Checks(lock=lock)
    dest = tmp_path / "resources" / "data.zip"
    download.fetch(f"{url}/data.zip", dest, checks)
    record = json.loads(lock.read_text())["files"][f"{url}/data.zip"]
    digest = hashlib.sha256(PAYLOAD).hexdigest()
    assert record["sha256"] == digest and record["bytes"] == len(PAYLOAD) and record["file"] == str(dest)
    assert record["verified_against"].startswith("nothing yet: recorded in")

    # another node: the same lock file, the server now hands out other bytes
    node = tmp_path / "node"
    node.mkdir()
    shutil.copy(lock, node / "downloads.lock.json")
    (served / "data.zip").write_bytes(PAYLOAD[::-1])
    other = node / "resources" / "data.zip"
    with pytest.raises(KnowprobeError) as error:
        download.fetch(f"{url}/data.zip", other, download.Checks(lock=node / "downloads.lock.json"))
    found = hashlib.sha256(PAYLOAD[::-1]).hexdigest()
    assert str(error.value) == (
        f"{other}: sha256 {found} does not match {digest} from the lock file {node / 'downloads.lock.json'} "
        f"(recorded {record['recorded']}); the file was deleted, run again to download it anew (or, if its "
        f"publisher changed the file on purpose, remove its entry from {node / 'downloads.lock.json'})"
    )
    assert not other.exists()
    # checksum: none takes it, with a warning, and records what it took
    download.fetch(f"{url}/data.zip", other, download.Checks(lock=node / "downloads.lock.json", checksum="none"))
    assert other.read_bytes() == PAYLOAD[::-1]


def test_a_digest_known_in_advance_is_checked_before_any_lock(files_server, tmp_path):
    import hashlib
    import json

    url, served = files_server
    (served / "TREx_train.tar.gz").write_bytes(PAYLOAD)
    digest = hashlib.sha256(PAYLOAD).hexdigest()
    lock = tmp_path / "downloads.lock.json"
    source = f"{url}/TREx_train.tar.gz"
    dest = tmp_path / "TREx_train.tar.gz"
    download.fetch(source, dest, download.Checks(lock=lock, known={source: digest}))
    assert json.loads(lock.read_text())["files"][source]["verified_against"] == (
        "its SHA-256 in the config (downloads.sha256)"
    )
    dest.unlink()
    with pytest.raises(KnowprobeError, match=rf"^{dest}: sha256 {digest} does not match {'0' * 64} from its SHA-256"):
        download.fetch(source, dest, download.Checks(lock=lock, known={source: "0" * 64}))
    assert not dest.exists()


def test_every_default_url_is_pinned_and_the_known_digests_are_of_default_urls():
    """Issue 44, item 6: LPAQA's TREx_train.tar.gz came from the moving master branch. Every URL
    default is pinned to a commit or a versioned path, or is one whose publisher offers none
    (docs/workflow.md#downloads says which, and the lock file holds them)."""
    import re

    from knowprobe import config

    filled = config.validate({"models": {"m": {"kind": "masked", "hub_id": "m"}}})
    urls = []

    def walk(node, path):
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, f"{path}.{key}" if path else key)
        elif isinstance(node, str) and re.match(r"^(https?|ftp)://", node):
            urls.append((path, node))

    walk({k: v for k, v in filled.items() if k != "downloads"}, "")
    unversioned = {  # no versioned path offered: verified against the lock file
        "https://dl.fbaipublicfiles.com/LAMA/data.zip",
        "https://dl.fbaipublicfiles.com/LAMA/common_vocab_cased.txt",
        "https://nlp.stanford.edu/data/glove.6B.zip",
    }
    for key, url in urls:
        if "raw.githubusercontent.com" in url:  # OWNER/REPO/COMMIT/PATH
            assert re.search(r"githubusercontent\.com/[^/]+/[^/]+/[0-9a-f]{40}/", url), f"{key}: {url} is not pinned"
        elif "github.com" in url:
            assert re.search(r"/(archive|raw)/[0-9a-f]{40}[/.]", url), f"{key}: {url} is not pinned to a commit"
        elif "dumps.wikimedia.org" in url:
            continue  # mirrors of dated dumps, verified against Wikimedia's checksum lists
        elif "wordnetcode.princeton.edu" in url:
            assert "/3.0/" in url
        else:
            assert url in unversioned, f"{key}: {url}"
    known = filled["downloads"]["sha256"]
    assert known and set(known) <= {url for _, url in urls}
    assert filled["lpaqa"]["trex_train"]["lpaqa"] in known


class FakeHub:
    """huggingface_hub's model_info and snapshot_download over files held in memory, by commit."""

    def __init__(self, commits, branches):
        self.commits, self.branches, self.asked = commits, branches, []

    def model_info(self, hub_id, revision=None, files_metadata=False):
        import hashlib

        from huggingface_hub.hf_api import BlobLfsInfo, RepoSibling

        self.asked.append(revision)
        commit = self.branches.get(revision, revision)
        siblings = []
        for name, data in self.listed[commit].items():
            if name.endswith(".safetensors"):
                lfs = BlobLfsInfo(size=len(data), sha256=hashlib.sha256(data).hexdigest(), pointer_size=130)
                siblings.append(RepoSibling(rfilename=name, size=len(data), lfs=lfs))
            else:
                blob = hashlib.sha1(f"blob {len(data)}\0".encode() + data).hexdigest()
                siblings.append(RepoSibling(rfilename=name, size=len(data), blob_id=blob))
        return type("Info", (), {"sha": commit, "siblings": siblings})()

    @property
    def listed(self):
        return getattr(self, "_listed", self.commits)

    def snapshot_download(self, hub_id, revision=None, local_dir=None, allow_patterns=None):
        from pathlib import Path

        for name, data in self.commits[revision].items():
            (Path(local_dir) / name).parent.mkdir(parents=True, exist_ok=True)
            (Path(local_dir) / name).write_bytes(data)
        return local_dir


def test_a_hub_model_is_pinned_to_its_commit_and_its_files_verified(tmp_path, monkeypatch):
    """Issue 44, item 6: hub models were taken at whatever their branch held. The revision is
    resolved to its commit and recorded with each file's SHA-256; a later download (another node)
    asks for that commit, not the branch, and holds the files to the lock file; the hub's own
    listing (an LFS file's SHA-256, a small file's git blob id) is checked on the first."""
    import json

    import huggingface_hub
    from huggingface_hub import constants

    # the suite runs offline (HF_HUB_OFFLINE), where a download copies from the hub's cache; this
    # test stands a fake hub in for the network
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    first, second = "a" * 40, "b" * 40
    hub = FakeHub(
        {
            first: {"config.json": b'{"model_type": "bert"}', "model.safetensors": b"weights-1"},
            second: {"config.json": b'{"model_type": "bert"}', "model.safetensors": b"weights-2"},
        },
        {"main": first},
    )
    monkeypatch.setattr(huggingface_hub.HfApi, "model_info", lambda self, *a, **k: hub.model_info(*a, **k))
    monkeypatch.setattr(huggingface_hub, "snapshot_download", hub.snapshot_download)
    lock = tmp_path / "downloads.lock.json"
    checks = download.Checks(lock=lock)
    models.download_hub_model("org/bert", "main", tmp_path / "one", name="bert", checks=checks)
    record = json.loads(lock.read_text())["models"]["org/bert@main"]
    assert record["commit"] == first and set(record["files"]) == {"config.json", "model.safetensors"}
    assert record["verified_against"].startswith(f"the hub's listing at commit {first}")

    hub.branches["main"] = second  # the branch moved on the hub
    hub.asked.clear()
    models.download_hub_model("org/bert", "main", tmp_path / "two", name="bert", checks=checks)
    assert hub.asked == [first] and (tmp_path / "two/model.safetensors").read_bytes() == b"weights-1"

    hub.commits[first]["model.safetensors"] = b"weights-X"  # the same commit, other bytes
    hub._listed = {first: dict(hub.commits[first])}
    with pytest.raises(
        KnowprobeError, match=rf"^{tmp_path / 'three' / 'model.safetensors'}: sha256 \w+ does not match "
    ):
        models.download_hub_model("org/bert", "main", tmp_path / "three", name="bert", checks=checks)

    # a first download whose bytes differ from what the hub lists
    hub._listed = {second: {"config.json": b'{"model_type": "bert"}', "model.safetensors": b"weights-2"}}
    hub.commits[second]["model.safetensors"] = b"truncated"
    with pytest.raises(
        KnowprobeError, match=r"model.safetensors: sha256 \w+ does not match \w+ from the hub's listing"
    ):
        models.download_hub_model("org/new", second, tmp_path / "four", name="new", checks=checks)


@pytest.mark.parametrize(
    "lock, problem",
    [
        ({"files": {"https://x/a.zip": "abc"}}, "files entry 'https://x/a.zip' is a str ('abc'), not a mapping"),
        ({"files": {"https://x/a.zip": {"sha256": 12}}}, "files entry 'https://x/a.zip': sha256 is 12, not a text"),
        (
            {"files": {"https://x/a.zip": {"bytes": "12"}}},
            "files entry 'https://x/a.zip': bytes is '12', not a whole number",
        ),
        ({"models": []}, "its models section is a list, not a mapping of hub_id@revision to its record"),
        ({"models": {"o/m@main": {"commit": 5}}}, "models entry 'o/m@main': commit is 5, not a text"),
        (
            {"models": {"o/m@main": {"files": {"config.json": {"sha256": None}}}}},
            "models entry 'o/m@main', file 'config.json': sha256 is None, not a text",
        ),
    ],
)
def test_a_lock_file_record_of_the_wrong_shape_is_one_line_naming_it(tmp_path, lock, problem):
    """Issue 54: a record that is a string was an AttributeError (download.py:305), a digest that
    is a number one at check_digest, a models section that is a list dropped the report's
    Downloads section without a word."""
    import json

    path = tmp_path / "downloads.lock.json"
    path.write_text(json.dumps({"version": 1, **lock}))
    for read in (download.read_lock, download.lock_report):
        with pytest.raises(KnowprobeError) as error:
            read(path)
        assert str(error.value) == f"{path}: {problem}; restore it, or delete that entry to record it anew"
    with pytest.raises(KnowprobeError, match=f"^{path}: "):
        download.verify_download("https://x/a.zip", path, download.Checks(lock=path))


def test_an_offline_copy_from_the_hubs_cache_is_held_to_the_lock_file(tmp_path, monkeypatch):
    """Issue 54: with HF_HUB_OFFLINE a model was copied from the hub's cache without reading the
    lock file; now the cache's copy at the recorded commit is taken and held to its digests."""
    import hashlib
    import json

    import huggingface_hub

    commit = "c" * 40
    snapshot = tmp_path / "cache" / commit
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text('{"model_type": "bert"}')
    (snapshot / "model.safetensors").write_bytes(b"weights-1")
    asked = []

    def cached(hub_id, revision=None, local_files_only=False):
        asked.append(revision)
        assert local_files_only
        if revision != commit:
            raise FileNotFoundError(revision)
        return str(snapshot)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", cached)
    lock = tmp_path / "downloads.lock.json"
    files = {
        name: {"sha256": hashlib.sha256((snapshot / name).read_bytes()).hexdigest()}
        for name in ("config.json", "model.safetensors")
    }
    record = {"commit": commit, "files": files}
    lock.write_text(json.dumps({"version": 1, "files": {}, "models": {"org/bert@main": record}}))
    checks = download.Checks(lock=lock)
    out = models.copy_from_cache("org/bert", "main", tmp_path / "one", "bert", checks)
    assert asked == [commit] and (out / "model.safetensors").read_bytes() == b"weights-1"

    (snapshot / "model.safetensors").write_bytes(b"weights-X")  # the cache's copy changed
    with pytest.raises(KnowprobeError) as error:
        models.copy_from_cache("org/bert", "main", tmp_path / "two", "bert", checks)
    assert str(error.value).startswith(f"{tmp_path / 'two' / 'model.safetensors'}: sha256 ")
    assert f"from the lock file {lock} (org/bert@main, commit {commit})" in str(error.value)

    record["commit"] = "d" * 40  # the lock file records a commit the cache does not hold
    lock.write_text(json.dumps({"version": 1, "files": {}, "models": {"org/bert@main": record}}))
    with pytest.raises(KnowprobeError, match=f"commit {'d' * 40} as the lock file {lock} records"):
        models.copy_from_cache("org/bert", "main", tmp_path / "three", "bert", checks)


def test_downloads_out_of_reach_are_one_line_naming_the_local_copies(files_server):
    """Issue 54: BEAR's download failed offline inside two jobs with Snakemake's failure blocks;
    the run's start now asks the first server once and names the config keys for local copies."""
    keys = {"http://127.0.0.1:9/BEAR.zip": "bear.path: a BEAR-format directory", "http://127.0.0.1:9/info.json": "x"}
    line = download.unreachable(keys, timeout=5)
    assert line.startswith("127.0.0.1:9 cannot be reached (ConnectionRefusedError: ")
    assert line.endswith(
        "this run downloads 2 files (http://127.0.0.1:9/BEAR.zip, http://127.0.0.1:9/info.json): give local "
        "copies instead (bear.path: a BEAR-format directory, x)"
    )
    url, _ = files_server
    assert download.unreachable({f"{url}/missing.zip": "y"}) is None  # a server that answers: the download's
    assert download.unreachable({}) is None


def test_the_report_lists_each_download_and_what_it_was_verified_against(files_server, tmp_path):
    """Issue 44, item 6: the report's first page lists what was verified against what."""
    import hashlib

    import jinja2

    from conftest import ROOT

    url, served = files_server
    (served / "data.zip").write_bytes(PAYLOAD)
    lock = tmp_path / "downloads.lock.json"
    assert download.lock_report(lock) == ""
    download.fetch(f"{url}/data.zip", tmp_path / "data.zip", download.Checks(lock=lock))
    text = download.lock_report(lock)
    assert text.startswith(f"**Downloads**, and what each was verified against (the lock file ``{lock}``):")
    assert (
        f"- ``{tmp_path / 'data.zip'}`` from {url}/data.zip: 1,048,576 bytes, sha256 "
        f"``{hashlib.sha256(PAYLOAD).hexdigest()}``; verified against nothing yet: recorded in {lock}" in text
    )
    page = jinja2.Template((ROOT / "workflow/report/workflow.rst").read_text()).render(
        snakemake={"config": {"_report": {"headlines": "", "downloads": text}, "studies": [], "models": {},
                              "lpaqa": {"datasets": [], "vocab": {"mode": "common"}, "prompt_sets": []},
                              "stest": {"source": "wikidata"}}}
    )  # fmt: skip
    assert text.strip() in page


def test_a_download_that_fills_the_disk_is_one_line_naming_it(server, small_file_system, tmp_path, capsys):
    """Issue 44, item 10: a full disk named no file (Python's write names none); the download's
    .part stays, for the next run to resume."""
    from knowprobe.io import rule_logging

    dest = small_file_system / "resources" / "data.zip"
    with pytest.raises(SystemExit), rule_logging(tmp_path / "job.log"):
        download.download(f"{server}/data.zip", dest)
    printed = capsys.readouterr().err.strip().splitlines()
    assert printed == [
        f"knowprobe error: {dest}: no space left on the device (file system at {small_file_system}, 0.0 GB free); "
        "free space or point the run elsewhere, then run the same command again: it goes on where it stopped"
    ]
    assert (small_file_system / "resources" / "data.zip.part").exists() and not dest.exists()


def test_a_model_save_that_fills_the_disk_is_one_line_naming_the_model(tmp_path, capsys, monkeypatch, tiny_bert):
    """Issue 44, item 10: save_pretrained's safetensors write on a full disk was two tracebacks
    (its SafetensorError was taken for a bug)."""
    from safetensors import SafetensorError

    from knowprobe import demo_model
    from knowprobe.io import rule_logging

    def full(*args, **kwargs):
        raise SafetensorError("Error while serializing: I/O error: No space left on device (os error 28)")

    monkeypatch.setattr(tiny_bert, "save_pretrained", full)
    out = tmp_path / "results" / "models" / "tiny"
    with pytest.raises(SystemExit), rule_logging(tmp_path / "job.log"):
        demo_model.save_trained(tiny_bert, None, out, {})
    printed = capsys.readouterr().err.strip().splitlines()
    assert len(printed) == 1 and printed[0].startswith(f"knowprobe error: {out}: no space left on the device")
    assert "Traceback" not in (tmp_path / "job.log").read_text()


def test_hf_hub_offline_takes_a_model_from_the_hubs_cache(tmp_path):
    """Issue 39: with HF_HUB_OFFLINE the start check finds a cached model and the download rule
    copies it (the files the download would fetch); one not cached is one line at the start."""
    import os
    import subprocess
    import sys

    snapshot = tmp_path / "hub/models--nobody--tiny/snapshots/abc123"
    snapshot.mkdir(parents=True)
    (tmp_path / "hub/models--nobody--tiny/refs").mkdir()
    (tmp_path / "hub/models--nobody--tiny/refs/main").write_text("abc123")
    for name in ("config.json", "vocab.txt", "model.safetensors", "README.md"):
        (snapshot / name).write_text("{}")
    script = (
        "from knowprobe.models import download_hub_model, hub_problem\n"
        "print(hub_problem({'models.tiny': ('nobody/tiny', 'main')}))\n"
        f"out = download_hub_model('nobody/tiny', 'main', {str(tmp_path / 'out')!r}, 'tiny')\n"
        "print(sorted(p.name for p in out.iterdir()))\n"
        "print(hub_problem({'models.tiny': ('nobody/tiny', 'main'), 'models.other': ('nobody/other', 'main')}))\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path / "hub")}
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    found, copied, missing = result.stdout.splitlines()
    assert found == "None" and copied == "['config.json', 'model.safetensors', 'vocab.txt']"
    assert missing.startswith("HF_HUB_OFFLINE is set and the hub's cache") and "lacks 1 of this run's 2" in missing
    assert "(models.other)" in missing and "models.tiny" not in missing
