"""knowprobe: measure what pre-trained language models know.

One module per workflow stage; each exposes pure functions that the Snakemake
rule wrappers in ``workflow/scripts`` call and that the tests call directly.
"""

__version__ = "0.1.0"
