"""The memory and time a heavy rule's job asks a scheduler for, from what its inputs weigh.

The full-scale rehearsal (``benchmarks/rehearsal.py``, docs/benchmarks.md) ran the workflow on a
generated Wikidata and Wikipedia at 0.25% and 1% of their real size and read each job's peak
memory and wall time from its log. Each heavy rule's grow linearly with the inputs that drive it
(the dump a chunk job reads its share of, the claims and entities tables, ...), so a job asks for
a fixed part plus a part per GB of those inputs, both measured, with a margin: at the demo's size
a few hundred MB and minutes, at full size what the rehearsal projects. A job the scheduler
killed for its limit is retried with twice as much (the profile's ``retries: 1``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# Every job of the rehearsal peaked at ~375 MB in Snakemake's script preamble (before the rule's
# code runs, whatever the inputs) and started the rule's own work from ~115 MB
PREAMBLE_PEAK_MB = 380
START_MB = 120
MEMORY_MARGIN = 1.5  # the rehearsal's growth exponents lay within 0.9-1.1; real entities vary more
TIME_MARGIN = 2.0  # a cluster's nodes and file systems are slower than the rehearsal's quiet machine, or faster
MIN_MINUTES = 10  # below this, a limit only risks killing a job that waited on its file system


@dataclass(frozen=True)
class Scaling:
    """A job's own memory and wall time: a fixed part and a part per GB of its driving inputs."""

    fixed_mb: float
    mb_per_gb: float
    fixed_minutes: float
    minutes_per_gb: float
    mb_per_thread: float = 0.0  # what each thread beyond the first adds (buffers of its own)

    def mem_mb(self, input_gb: float, threads: int = 1, attempt: int = 1) -> int:
        own = self.fixed_mb + self.mb_per_gb * input_gb + self.mb_per_thread * (threads - 1)
        return math.ceil(max(PREAMBLE_PEAK_MB, START_MB + own) * MEMORY_MARGIN * attempt)

    def runtime(self, input_gb: float, attempt: int = 1) -> int:
        """Minutes."""
        minutes = (self.fixed_minutes + self.minutes_per_gb * input_gb) * TIME_MARGIN * attempt
        return max(MIN_MINUTES * attempt, math.ceil(minutes))


# Fitted through the rehearsal's two sizes (0.25% and 1% of Wikidata; docs/benchmarks.md,
# "Full-scale rehearsal"), 2026-11-25 on the 2-core machine: a job's own memory (MB) and wall time
# (minutes), fixed and per GB of the inputs it reads (a chunk job: its share of the dump).
MEASURED = {
    # the index pass: flat in the dump (16 MiB checkpoints); rapidgzip's parallel decoding holds
    # ~350 MB more per thread (684 against 337 MB at two threads)
    "wikidata_index": Scaling(220, 4, 0.7 / 60, 5 / 60, mb_per_thread=350),
    "wikidata_chunk": Scaling(112, 17, 0.2 / 60, 24 / 60),  # GB of the .json.gz, the job's share
    "wikidata_gather": Scaling(116, 626, 0.5 / 60, 50 / 60),  # GB of the chunks' parts
    "lpaqa_trex_train": Scaling(111, 3503, 0.8 / 60, 84 / 60),  # GB of claims and entities
    "stest_build": Scaling(82, 3545, 1.3 / 60, 135 / 60),  # GB of claims and entities
    "lpaqa_wikipedia_extract": Scaling(84, 1424, 0.2 / 60, 273 / 60),  # GB of the .xml.bz2, the job's share
    # 0.5 s at both sizes: its time per GB is below the rehearsal's resolution (the 10-minute floor holds it)
    "lpaqa_wikipedia_redirects": Scaling(51, 22904, 0.5 / 60, 0),  # GB of the chunks' redirect parts
    "lpaqa_distant_supervision": Scaling(196, 1071, 1.0 / 60, 22 / 60),  # GB of the chunk's sentences
    "lpaqa_mine_prompts": Scaling(371, 122738, 2.7 / 60, 18772 / 60),  # GB of the matches (spaCy's parse)
}
# Not measured: the multi-token facts (issue 41) are T-REx-train's streamed pass over the same
# claims and entities with two filters off (and the objects' labels tokenized, seconds for 41,000),
# so they ask for what T-REx-train's measurements say until a rehearsal measures them
MEASURED["lpaqa_multitoken_facts"] = MEASURED["lpaqa_trex_train"]
# What those inputs weigh in the full reproduction (GB a job reads), as the rehearsal projects it:
# the dumps as Wikimedia lists them (a chunk job's share of config.yaml's chunks), the tables the
# workflow writes grown from the 1% run with Wikidata's items or Wikipedia's articles
FULL_INPUT_GB = {
    "wikidata_index": 140.0,
    "wikidata_chunk": 140.0 / 16,
    "wikidata_gather": 3.2,
    "lpaqa_trex_train": 3.2,
    "lpaqa_multitoken_facts": 3.2,
    "stest_build": 3.2,
    "lpaqa_wikipedia_extract": 24.0 / 32,
    "lpaqa_wikipedia_redirects": 0.19,
    "lpaqa_distant_supervision": 1.3,
    "lpaqa_mine_prompts": 0.03,
}
