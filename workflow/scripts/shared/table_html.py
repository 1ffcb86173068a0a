"""Rule table_html: a result table as an HTML page, the entry the report shows it by: a Markdown
table in its paper layout with its caption, or a CSV table as it is."""

from pathlib import Path

import pandas as pd

from knowprobe.io import rule_logging, write_text
from knowprobe.tables import html_page, read_markdown

with rule_logging(snakemake.log[0]) as log:
    source = Path(snakemake.input.table)
    if source.suffix == ".md":
        caption, frame = read_markdown(source.read_text(encoding="utf-8"))
    else:
        caption, frame = "", pd.read_csv(source, keep_default_na=False, dtype=str)
    caption = caption or snakemake.params.label
    note = (
        f"{source} ({len(frame)} rows); beside it the same table as CSV, Markdown or LaTeX where the rule writes them."
    )
    write_text(html_page(snakemake.params.label, caption, frame, note), snakemake.output[0])
    log.info("%s: %d rows, %d columns", source, len(frame), len(frame.columns))
