# %% [markdown]
# # Review drafted probes
#
# `lyra-lab probes draft EXPORT --out drafts.jsonl` has a model write questions about your
# sessions and keeps only those that pass mechanical checks (answer found in its evidence turns,
# not given away by the question, no near-duplicates). Checks are not judgement: read each probe
# beside its evidence here, reject the bad ones, and save the rest as your probes file.
#
# Set `LYRA_PROBE_REVIEW_CORPUS` and `LYRA_PROBE_REVIEW_DRAFTS` to your export and drafts file.
# Without them the notebook reviews the synthetic corpus's own probes as stand-ins.

# %%
import os
from pathlib import Path

import pandas as pd

import lyra_lab
from lyra_lab.probes import save_probes

REPO = Path(lyra_lab.__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("LYRA_PROBE_REVIEW_CORPUS", REPO / "datasets" / "synthetic_small.jsonl"))
DRAFTS = os.environ.get("LYRA_PROBE_REVIEW_DRAFTS")
OUT = Path(os.environ.get("LYRA_PROBE_REVIEW_OUT", REPO / "runs" / "probe_review"))
OUT.mkdir(parents=True, exist_ok=True)
pd.set_option("display.max_colwidth", 120)

# %% [markdown]
# ## 1. Load the corpus and the drafts
#
# Every evidence id in the drafts file is checked against the corpus as it loads.

# %%
corpus = lyra_lab.load(CORPUS)
if DRAFTS:
    drafts = lyra_lab.load_probes(DRAFTS, corpus)
else:  # stand-ins: a few of the synthetic corpus's own probes that have evidence
    drafts = [p for p in corpus.probes if p.evidence][:6]
turns = {t.id: t for t in corpus.turns()}
print(f"{len(drafts)} probes to review from {CORPUS.name}")


# %% [markdown]
# ## 2. Each probe beside its evidence
#
# `accept` starts True. Change it in the next cell (or edit `review` any way pandas allows).

# %%
def evidence_text(probe):
    """The probe's evidence turns, one ``[role] text`` line each, for the reviewer."""
    return "\n".join(f"[{t.role}] {t.text}" for t in (turns[e] for e in probe.evidence))


review = pd.DataFrame([{"id": p.id, "question": p.question, "answer": p.answer, "evidence": evidence_text(p),
                        "model": p.meta.get("model"), "accept": True} for p in drafts]).set_index("id")
review

# %%
# Your decisions: the ids to reject (reviewing the stand-ins, reject the first one as an example).
REJECT = [] if DRAFTS else list(review.index[:1])
review.loc[review.index.isin(REJECT), "accept"] = False
review["accept"].value_counts()

# %% [markdown]
# ## 3. Save the accepted probes
#
# The file is a lyra-lab probes file: pass it to `lyra_lab.load(EXPORT, probes=...)`, to an
# experiment's `[corpus] probes = ...`, or to `lyra-lab recall-eval --probes`.

# %%
accepted = [p for p in drafts if review.loc[p.id, "accept"]]
path = save_probes(accepted, OUT / "accepted_probes.jsonl")
reloaded = lyra_lab.load_probes(path, corpus)
print(f"kept {len(reloaded)} of {len(drafts)} probes in {path}")
