"""Rule comps_import_released: the authors' released stimuli, every bad line counted."""

from knowprobe import contracts
from knowprobe.comps.released import read_release
from knowprobe.io import rule_logging, write_csv

with rule_logging(snakemake.log[0]) as log:
    stimuli, rejects = read_release(snakemake.input.release)
    if rejects["n"].sum():
        log.warning("%d released lines left out: %s", rejects["n"].sum(), rejects.to_dict("records"))
    contracts.write(stimuli, snakemake.output.stimuli, contracts.COMPS_STIMULI)
    write_csv(rejects, snakemake.output.rejects)
