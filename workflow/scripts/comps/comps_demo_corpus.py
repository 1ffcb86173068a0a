"""Rule comps_demo_corpus: COMPS's part of the demo models' corpus: every concept-property pair of
the norms as a sentence ("a robin can fly ."), the property marked as the object, and the words
its stimuli will meet (nonce words and the WUGS templates' words), each to be one token."""

import pandas as pd

from knowprobe import contracts
from knowprobe.comps import norms
from knowprobe.io import rule_logging, write_text

with rule_logging(snakemake.log[0]) as log:
    world = norms.read_norms(snakemake.input.norms)
    phrases = {c: norms.noun_phrase(a) for c, a in zip(world.concepts["concept"], world.concepts["article"])}
    rows = []
    for concept, feature in zip(world.features["concept"], world.features["feature"]):
        head = f"{phrases[concept]} "
        rows.append({"text": f"{head}{feature} .", "object_start": len(head), "object_end": len(head) + len(feature)})
    log.info("%d sentences from the norms' concept-property pairs", len(rows))
    words = [*phrases.values(), *snakemake.params.nonce_words, "A a an is . Therefore ,"]
    words += [p.capitalize() for p in phrases.values()]
    contracts.write(
        pd.DataFrame(rows, columns=contracts.DEMO_CORPUS.columns), snakemake.output.sentences, contracts.DEMO_CORPUS
    )
    write_text("\n".join(words) + "\n", snakemake.output.words)
