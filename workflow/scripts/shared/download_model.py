"""Rules download_model and lpaqa_download_translator: a hub model's weights and tokenizer ->
resources/models/NAME (resources/translators/DIRECTION), at the commit its revision resolves to
(or the lock file recorded), each file verified (knowprobe.models.download_hub_model); a GGUF
model's file (from the hub, or a local file linked) -> resources/models/NAME, verified, with its
gguf.json (knowprobe.gguf_models.fetch_model)."""

from knowprobe.download import Checks
from knowprobe.gguf_models import fetch_model, is_gguf
from knowprobe.io import rule_logging
from knowprobe.models import download_hub_model

with rule_logging(snakemake.log[0]):
    model = getattr(snakemake.wildcards, "model", None)  # the translators are named by direction
    # a GGUF model is read from the config, not from params: a new param would rerun every download made before
    entry = snakemake.config["models"][model] if model is not None else {}
    if is_gguf(entry):
        fetch_model(model, entry, snakemake.output[0], Checks.from_config(snakemake.config))
    else:
        download_hub_model(
            snakemake.params.hub_id,
            snakemake.params.revision,
            snakemake.output[0],
            name=model,
            checks=Checks.from_config(snakemake.config),
        )
