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
