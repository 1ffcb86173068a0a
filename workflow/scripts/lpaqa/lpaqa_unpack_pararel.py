"""Rule lpaqa_unpack_pararel: ParaRel's repository archive -> its data/pattern_data folder
(graphs_json/P*.jsonl), every file checked against the listing of lpaqa.pararel.checksums."""

from knowprobe.download import unpack
from knowprobe.io import rule_logging
from knowprobe.lpaqa import pararel

with rule_logging(snakemake.log[0]) as log:
    folder = unpack(
        snakemake.input.archive,
        snakemake.output[0],
        f"{pararel.FOLDER}/P*.jsonl",
        "an archive of ParaRel's repository",
    )
    if snakemake.input.checksums:
        pararel.verify_patterns(folder, snakemake.input.checksums)
    else:
        log.warning("lpaqa.pararel.checksums is null: the unpacked patterns are not checked")
    log.info("unpacked ParaRel's patterns of %s into %s", snakemake.input.archive, folder)
