"""Rules download_model and lpaqa_download_translator: a hub model's weights and tokenizer ->
resources/models/NAME (resources/translators/DIRECTION)."""

from knowprobe.io import rule_logging
from knowprobe.models import download_hub_model

with rule_logging(snakemake.log[0]):
    download_hub_model(
        snakemake.params.hub_id,
        snakemake.params.revision,
        snakemake.output[0],
        name=getattr(snakemake.wildcards, "model", None),
    )
