"""Rules download_model and lpaqa_download_translator: a hub model's weights and tokenizer ->
resources/models/NAME (resources/translators/DIRECTION), at the commit its revision resolves to
(or the lock file recorded), each file verified (knowprobe.models.download_hub_model)."""

from knowprobe.download import Checks
from knowprobe.io import rule_logging
from knowprobe.models import download_hub_model

with rule_logging(snakemake.log[0]):
    download_hub_model(
        snakemake.params.hub_id,
        snakemake.params.revision,
        snakemake.output[0],
        name=getattr(snakemake.wildcards, "model", None),  # the translators are named by direction
        checks=Checks.from_config(snakemake.config),
    )
