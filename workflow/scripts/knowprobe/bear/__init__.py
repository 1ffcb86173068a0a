"""BEAR (Wiland, Ploner and Akbik, Findings of NAACL 2024) and its library lm-pub-quiz: relational
knowledge probed with a closed answer space, masked and causal LMs alike, by ranking the
statements of every candidate answer by their (pseudo-)log-likelihood.

- ``dataset``: the BEAR format (``metadata_relations.json`` and one JSON-lines file per relation),
  read into the ``bear_relations`` and ``bear_instances`` tables and written back, every bad
  record counted; the download's files checked against a SHA-256 manifest;
- ``export``: any knowprobe fact set with templates (LAMA T-REx with a prompt set, S-TEST's
  triples) as a BEAR-format directory, and its command line;
- ``probe``: every statement of every template scored through the shared statement scores;
- ``metrics`` and ``tables``: accuracy per relation, template, domain and model, the mean ± standard
  error over templates (the leaderboard's figure), the random baseline, the leaderboard beside ours;
- ``corpus``: BEAR's part of the demo models' corpus.
"""
