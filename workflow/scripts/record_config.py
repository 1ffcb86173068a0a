"""Rule record_config: the run's resolved config (every default filled in), which a report built
later must match (workflow/rules/common.smk)."""

import yaml

from knowprobe.io import rule_logging, write_text

with rule_logging(snakemake.log[0]) as log:
    write_text(yaml.safe_dump(dict(snakemake.params.config), sort_keys=True, allow_unicode=True), snakemake.output[0])
    log.info("recorded the run's config in %s", snakemake.output[0])
