# %% [markdown]
# # Property-testing your own strategy
#
# You have an idea for a chunker (or a rollup) and want to know two things: **does it keep the
# promises every lyra-lab strategy keeps**, and **does it remember better** than what is built in?
# This notebook walks through both, with a strategy written here:
#
# 1. write a chunker as a frozen dataclass and register it by name;
# 2. check it with hypothesis and lyra-lab's invariants (coverage, order, budget, provenance): it
#    has a deliberate bug, the property test finds it, and hypothesis **shrinks** the failure to a
#    minimal counterexample;
# 3. fix it, and the same property test passes;
# 4. the same for a rollup, with lyra-lab's stateful test (`rollup_machine`);
# 5. the fixed chunker joins a small grid beside a built-in chunker (no LLM: chunks go into
#    memory as they are, BM25 recalls them), and we compare recall with confidence intervals.
#
# **Run time** (measured headless, kernel start included, on 2 shared cores). Small mode (the
# default, what `make test` runs): 10 to 40 s. Full mode (`LYRA_NB_FULL=1 make lab`: the
# variable must be set before the kernel starts): 25× more chunker examples, 10× more rollup
# runs of twice the length, both synthetic conversations and five chunk sizes per chunker;
# 1 to 3 minutes depending on what else the cores run (measured 1 min 12 s, 1 min 53 s and 2 min 37 s).

# %%
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from hypothesis import Phase, given, settings
from hypothesis.stateful import run_state_machine_as_test

import lyra_lab
from lyra_lab.backends import token_counter
from lyra_lab.chunking import CHUNKERS, Budget, Chunk, Transcript, render_turn, render_turns
from lyra_lab.stats import aggregate, compare
from lyra_lab.experiments import ExperimentSpec, run_experiment
from lyra_lab.recall import RECALLERS
from lyra_lab.replay import Registries
from lyra_lab.rollup import ROLLUPS, RollupReport, render_memory
from lyra_lab.summarize import SUMMARIZERS
from lyra_lab.testing import InvariantViolation, check_chunker, rollup_machine, turns_strategy

FULL = os.environ.get("LYRA_NB_FULL", "") not in ("", "0")
REPO = Path(lyra_lab.__file__).resolve().parents[1]
DATA = REPO / "datasets" / "synthetic_small.jsonl"
# Where this notebook writes its run folder, table and figure (the notebook test points it at a temp dir).
OUT = Path(os.environ.get("LYRA_PROPERTY_TESTING_OUT", REPO / "runs" / "property_testing"))
OUT.mkdir(parents=True, exist_ok=True)
# hypothesis keeps caches (unicode tables) in ./.hypothesis; this notebook's go under OUT instead
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(OUT / ".hypothesis"))

EXAMPLES = 5000 if FULL else 200          # generated conversations per chunker property test
MACHINES = 1000 if FULL else 100          # generated rule sequences per rollup state-machine test
# deadline=None: two shared cores make timings meaningless.  database=None: no example database
# (failures are not replayed from an earlier run).  derandomize=True: the same search every run, so the counterexample
# printed below is the one you get too -- in your own test suite leave it random (each run then
# explores new inputs) and let the database remember failures.  No "explain" phase: it re-runs
# variations of the failure to point at lines only failing runs reach (here, inside lyra-lab's
# checker, not your code), and on the rollup machine it took ten times longer than everything else.
HYPOTHESIS = settings(deadline=None, database=None, derandomize=True, report_multiple_bugs=False,
                      phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink])
started = time.perf_counter()
print(f"{'full' if FULL else 'small'} mode: {EXAMPLES} examples per chunker test, {MACHINES} per rollup test")

# %% [markdown]
# ## 1. A chunker of your own
#
# A chunker is any object with `chunk(turns_or_text) -> list[Chunk]`. The contract every
# lyra-lab chunker keeps:
#
# * it splits the **canonical transcript** (`Transcript.of(turns)`: each turn rendered by
#   `render_turn` as `[2023-05-08 13:56] Caroline: text\n`), so the chunks, joined, give back
#   the transcript exactly (nothing lost, nothing reordered);
# * each `Chunk` says which turns it holds (`turn_ids`), their sessions and their time span:
#   that **provenance** is what recall is scored on;
# * a `budget()` method states its size promise as a `Budget` (unit, limit, how a chunk is
#   measured, which chunks are one indivisible unit allowed over the limit).
#
# Ours, `sentence_pack`, cuts the transcript after every sentence end (`. `, `! `, `? `) and
# line break, and packs whole sentences into chunks of at most `max_chars` characters; a
# sentence longer than that stands alone. First the parts that are not about packing: the
# sentence splitter, and turning packed texts into `Chunk`s with their provenance.

# %%
SENTENCE_END = re.compile(r"(?<=[.!?] )|(?<=\n)")  # cut after ". ", "! ", "? " and after "\n"


def sentences(text: str) -> list[str]:
    """``text`` cut after each sentence end; ``"".join(sentences(text)) == text``."""
    return [s for s in SENTENCE_END.split(text) if s]


def to_chunks(transcript: Transcript, texts: list[str]) -> list[Chunk]:
    """Consecutive pieces of the transcript as Chunks that name the turns, sessions and times they hold."""
    chunks, start = [], 0
    for index, text in enumerate(texts):
        held = transcript.turns_in(start, start + len(text))
        stamps = [t.timestamp for t in held if t.timestamp is not None]
        chunks.append(Chunk(index, text, turn_ids=tuple(t.id for t in held),
                            session_ids=tuple(dict.fromkeys(t.session_id for t in held)),
                            start=min(stamps, default=None), end=max(stamps, default=None)))
        start += len(text)
    return chunks


def one_sentence(chunk: Chunk) -> bool:
    """A chunk that is a single sentence: allowed over the budget (there is nowhere to cut it)."""
    return len(sentences(chunk.text)) == 1


# %% [markdown]
# Now the packing, written the way it often is the first time: add sentences until the
# chunk is full, then start a new one. It reads right, and on a few hand-made examples it looks
# right. It has a bug (can you see it before hypothesis does?).

# %%
@dataclass(frozen=True)
class SentencePackBuggy:
    """Whole sentences packed into chunks of at most ``max_chars`` characters (first attempt)."""

    max_chars: int = 120

    def budget(self) -> Budget:
        """Chunks are measured in characters; one over-long sentence may stand alone."""
        return Budget("chars", self.max_chars, measure=lambda c: len(c.text), atomic=one_sentence)

    def chunk(self, turns) -> list[Chunk]:
        """Pack whole sentences into chunks, closing a chunk once it is full (the bug: after, not before)."""
        transcript = Transcript.of(turns)
        texts, current = [], ""
        for sentence in sentences(transcript.text):
            current += sentence
            if len(current) >= self.max_chars:  # full: close this chunk
                texts.append(current)
                current = ""
        if current:
            texts.append(current)
        return to_chunks(transcript, texts)


# %% [markdown]
# ### Register it by name
#
# Experiments name strategies (`{ name = "token_budget", max_tokens = 300 }`), and a `Registry`
# maps those names to classes. Registries are explicit objects you pass around, so rather than
# adding to lyra-lab's own `CHUNKERS` we make a new one with `CHUNKERS.extended(...)`: lyra-lab's
# chunkers plus ours (re-running the cell with a redefined class simply replaces the entry).

# %%
MY_CHUNKERS = CHUNKERS.extended(sentence_pack=SentencePackBuggy)
BUDGET_CHARS = 120
buggy = MY_CHUNKERS.build({"name": "sentence_pack", "max_chars": BUDGET_CHARS})  # what an experiment file would do
print(MY_CHUNKERS.names())
print(buggy)
[c.text for c in buggy.chunk("Hi there. How are you? I moved to Lisbon last spring.\n")]


# %% [markdown]
# ## 2. Check it with hypothesis and lyra-lab's invariants
#
# `check_chunker(chunker, turns)` chunks the turns (and their rendered text as a plain string)
# and raises `InvariantViolation` naming the first promise broken: deterministic output; chunks
# indexed in order and never empty; **coverage and order** (concatenation restores the input,
# every turn is in some chunk, a turn's chunks are contiguous); **provenance** (`turn_ids`,
# `session_ids`, `start`/`end` are exactly those of the text the chunk holds); and the
# **budget** from `chunker.budget()`.
#
# `turns_strategy()` generates conversations that stress a chunker the way real exports do: any
# unicode (emoji, right-to-left text, NUL, lone `\r`), empty turns, one-turn sessions, sometimes
# one huge pasted line, and empty conversations. The property test is the one you would put in
# your `tests/` folder, wrapped in a function here so we can run it on both versions and keep
# the inputs it tried.

# %%
def chunker_property(chunker, max_examples: int = EXAMPLES):
    """A hypothesis test: ``check_chunker`` holds on every generated conversation. Returns (test, inputs tried)."""
    tried = []

    @settings(HYPOTHESIS, max_examples=max_examples)
    @given(turns_strategy())
    def test_chunker_keeps_its_promises(turns):
        tried.append(turns)
        check_chunker(chunker, turns)

    return test_chunker_keeps_its_promises, tried


test, tried = chunker_property(buggy)
try:
    test()
    raise RuntimeError("the property test found no counterexample")
except InvariantViolation as exc:
    failure = exc
print(f"hypothesis ran {len(tried)} inputs (search, then shrinking)")
print(f"broken invariant: {failure.invariant}")
print(failure.detail)

# %% [markdown]
# The test failed on the **budget**. Hypothesis did not stop at the first failing input it
# generated; it **shrank** it (fewer turns, shorter and simpler texts, plainer speakers and
# times) for as long as the test still failed. The last input the test
# ran is that minimal counterexample (hypothesis re-runs it to report it), and this is how
# hypothesis prints it:

# %%
shrunk = tried[-1]
print("\n".join(failure.__notes__))  # hypothesis's own report of the falsifying example


# %%
def describe(turns) -> pd.DataFrame:
    """One row per turn: its text and its rendered line, as the shrunk counterexample shows them."""
    return pd.DataFrame([{"turn": t.id, "speaker": t.speaker or t.role, "text": repr(t.text),
                          "rendered": repr(render_turn(t)), "rendered chars": len(render_turn(t))} for t in turns])


shrunk_chunks = buggy.chunk(shrunk)
over = [c for c in shrunk_chunks if len(c.text) > BUDGET_CHARS]
shrunk_summary = {"turns": len(shrunk), "text_chars": sum(len(t.text) for t in shrunk),
                  "transcript_chars": sum(len(render_turn(t)) for t in shrunk),
                  "chunk_chars": [len(c.text) for c in shrunk_chunks]}
print(f"minimal counterexample: {shrunk_summary['turns']} turns, {shrunk_summary['text_chars']} characters of text, "
      f"{shrunk_summary['transcript_chars']} rendered; the buggy chunker made chunks of {shrunk_summary['chunk_chars']} "
      f"chars: {max(len(c.text) for c in over) - BUDGET_CHARS} over the {BUDGET_CHARS}-char budget")
describe(shrunk)


# %% [markdown]
# Read it: sentences are added *first* and the size is checked *after*, so a chunk that is
# just under the budget takes one more sentence and ends over it. Hypothesis found the smallest
# such case it could reach: few turns, empty or nearly empty texts, and a chunk just over the
# budget. (The 120-character budget keeps the example readable; the bug is the same at 4,000.)
#
# ## 3. Fix it: close the chunk *before* a sentence that would not fit

# %%
@dataclass(frozen=True)
class SentencePack:
    """Whole sentences packed into chunks of at most ``max_chars`` characters; a longer sentence stands alone."""

    max_chars: int = 120

    def __post_init__(self):
        """Refuse a non-positive or non-integer ``max_chars``."""
        if isinstance(self.max_chars, bool) or not isinstance(self.max_chars, int) or self.max_chars < 1:
            raise ValueError(f"sentence_pack: max_chars must be a positive integer, got {self.max_chars!r}")

    def budget(self) -> Budget:
        """Chunks are measured in characters; one over-long sentence may stand alone."""
        return Budget("chars", self.max_chars, measure=lambda c: len(c.text), atomic=one_sentence)

    def chunk(self, turns) -> list[Chunk]:
        """Pack whole sentences into chunks, closing a chunk before a sentence that would not fit."""
        transcript = Transcript.of(turns)
        texts, current = [], ""
        for sentence in sentences(transcript.text):
            if current and len(current) + len(sentence) > self.max_chars:  # would not fit: close first
                texts.append(current)
                current = ""
            current += sentence
        if current:
            texts.append(current)
        return to_chunks(transcript, texts)


fixed = SentencePack(max_chars=120)
check_chunker(fixed, shrunk)  # the counterexample first: it now passes
test, tried = chunker_property(fixed)
test()  # raises if any generated conversation breaks an invariant
fixed_examples = len(tried)
generated = pd.DataFrame({"turns": [len(t) for t in tried],
                          "longest turn (chars)": [max((len(x.text) for x in t), default=0) for t in tried],
                          "chunks": [len(fixed.chunk(t)) for t in tried]})
print(f"the same property test passed on {fixed_examples} generated conversations "
      f"({(generated['turns'] == 0).sum()} empty, {(generated['longest turn (chars)'] > fixed.max_chars).sum()} "
      f"with a turn longer than the budget)")
generated.describe().loc[["mean", "min", "50%", "max"]].round(1)


# %% [markdown]
# ## 4. A rollup of your own, tested as a state machine
#
# A rollup compacts a conversation's memory under a token budget: `compact(store,
# conversation_id, request) -> RollupReport`, where `request` (a `CompactRequest`) carries the
# budget, the LLM backend, the replay clock's `now` and the token count; the report accounts
# for every turn (kept, folded into a digest, or dropped). A rollup has state (the memory it
# compacted last time), so one input is not enough: `rollup_machine(rollup, budget=...)` builds
# a hypothesis **state machine** that adds turns, compacts (with a working fake LLM, and with
# one that fails), adds turns of another conversation, compacts again, in generated orders,
# and after every step checks: rendered memory within budget, no turn lost without being
# reported dropped (provenance), a failed LLM changes nothing, compacting twice changes nothing,
# other conversations untouched. Token counts are whitespace words here, to keep it fast.
#
# Ours needs no LLM: `drop_oldest` drops the oldest entries until the memory fits. The first
# version measures the memory as the sum of its entries' texts; but the budget is on the memory
# *as the model gets it*, `render_memory(entries)`, which puts a date label before each entry.

# %%
def drop_oldest(store, conversation_id, budget, count, size) -> RollupReport:
    """Drop the oldest entries until ``size(entries) <= budget``; report every dropped turn."""
    entries = store.entries(conversation_id)
    before = count(render_memory(entries))
    kept = sorted(entries, key=lambda e: (e.end or e.start, e.id))  # oldest first
    dropped = []
    while kept and size(kept) > budget:
        dropped.append(kept.pop(0))
    turns = lambda es: tuple(sorted(t for e in es for t in e.turn_ids))  # noqa: E731
    if not dropped:
        return RollupReport(ran=False, tokens_before=before, tokens_after=before, budget=budget,
                            kept=turns(entries), reason="within budget")
    store.apply(remove=[e.id for e in dropped])
    return RollupReport(ran=True, tokens_before=before, tokens_after=count(render_memory(kept)), budget=budget,
                        kept=turns(kept), dropped=turns(dropped), reason=f"dropped the {len(dropped)} oldest entries")


@dataclass(frozen=True)
class DropOldestBuggy:
    """A drop-oldest rollup measuring the entries' texts alone (the bug: the budget is on rendered lines)."""
    def compact(self, store, conversation_id, request):
        """Drop the oldest entries until their texts fit ``request.budget``."""
        size = lambda es: sum(request.count(e.text) for e in es)  # noqa: E731 -- the texts alone: no date labels
        return drop_oldest(store, conversation_id, request.budget, request.count, size)


@dataclass(frozen=True)
class DropOldest:
    """A drop-oldest rollup that measures what the budget is on: the rendered memory."""
    def compact(self, store, conversation_id, request):
        """Drop the oldest entries until the rendered memory fits ``request.budget``."""
        size = lambda es: request.count(render_memory(es))  # noqa: E731 -- what the budget is really on
        return drop_oldest(store, conversation_id, request.budget, request.count, size)


ROLLUP_BUDGET = 10  # words; a small budget keeps counterexamples short
STEPS = 20 if FULL else 10  # the most rule steps in one generated run


def rollup_property(rollup):
    """Run lyra-lab's state machine on ``rollup``; return (the violation or None, machines run)."""
    runs = []

    class Counted(rollup_machine(rollup, budget=ROLLUP_BUDGET)):
        def __init__(self):
            super().__init__()
            runs.append(1)

    Counted.__name__ = Counted.__qualname__ = f"{type(rollup).__name__}Machine"  # how the report names it

    try:
        run_state_machine_as_test(Counted, settings=settings(HYPOTHESIS, max_examples=MACHINES,
                                                             stateful_step_count=STEPS))
    except InvariantViolation as exc:
        return exc, len(runs)
    return None, len(runs)


rollup_failure, rollup_runs = rollup_property(DropOldestBuggy())
CHECKS = ("state.every_turn_accounted_for_once()", "state.other_conversations_untouched()",
          "state.periods_agree_with_timestamps()")  # the invariants, checked after every step
report = [line for line in "\n".join(rollup_failure.__notes__).splitlines() if line not in CHECKS]
steps = [line for line in report if line.startswith("state.") and line not in ("state.start()", "state.teardown()")]
print(f"{rollup_failure.detail}  (after {rollup_runs} machines, search and shrinking)")
print(f"shrunk to {len(steps)} rule steps; hypothesis's report, without the invariant checks between steps:\n")
print("\n".join(report))

# %% [markdown]
# Read the shrunk run from the bottom: one compaction, after turns whose texts (the
# `Draw` lines) are empty or nearly so. Counted the buggy way, their texts fit the budget;
# rendered, each entry gains a date label, and the memory the model would get is over it. The
# fix measures what the budget is on:

# %%
rollup_ok, rollup_fixed_runs = rollup_property(DropOldest())
assert rollup_ok is None, rollup_ok
print(f"drop_oldest (fixed) kept every rollup invariant over {rollup_fixed_runs} generated rule sequences "
      f"of up to {STEPS} steps each")

# %% [markdown]
# To use it in a grid, register it the same way: `ROLLUPS.extended(drop_oldest=DropOldest)`
# holds lyra-lab's rollups plus yours, passed as `Registries(..., rollups=...)`.
#
# ## 5. The fixed chunker joins a grid
#
# Does packing whole sentences serve recall better than lyra-lab's `token_budget` (whole lines
# under a token budget)? An experiment file in TOML, as you would write it for `lyra-lab run`,
# naming our chunker by its registered name. It calls no model: `summarizers = ["none"]` puts
# the chunks themselves into memory, `keep_raw = false` takes the raw turns out once a chunk
# holds them (so memory is the chunks alone and the chunker decides what recall can find), and
# BM25 recalls. `backends = ["fake"]` makes sure nothing could start a model. Chunk sizes are
# matched: our chunker counts characters, `token_budget` counts `o200k_base` tokens, so each
# token budget is converted at the corpus's own rate of characters per token.

# %%
MY_CHUNKERS = CHUNKERS.extended(sentence_pack=SentencePack)
transcript = render_turns([t for c in lyra_lab.load(DATA).conversations for t in c.turns()])
CHARS_PER_TOKEN = len(transcript) / token_counter("o200k_base")(transcript)
SIZES = [25, 50, 100, 200, 400] if FULL else [50, 150]  # tokens
AS_CHARS = {t: round(CHARS_PER_TOKEN * t) for t in SIZES}
print(f"the corpus renders at {CHARS_PER_TOKEN:.2f} characters per o200k_base token; sentence_pack budgets: {AS_CHARS}")
chunkers = ", ".join([f'{{ name = "sentence_pack", max_chars = {AS_CHARS[t]} }}' for t in SIZES]
                     + [f'{{ name = "token_budget", max_tokens = {t} }}' for t in SIZES])
CONTEXT = 512  # tokens of recalled context every pipeline is scored at
GRID_TOML = f"""
name = "property_testing_grid"
description = "sentence_pack (written in notebooks/04) vs token_budget at matched chunk sizes, no LLM"

[corpus]
path = "{DATA.as_posix()}"
{"" if FULL else "conversations = 1"}

[grid]
chunkers = [{chunkers}]
summarizers = ["none"]
keep_raw = [false]
recallers = ["bm25"]

[run]
backends = ["fake"]
embedders = ["hashing"]
ks = [1, 5, 10]
score_at_tokens = [{CONTEXT}]
"""
(OUT / "grid.toml").write_text(GRID_TOML)
print(GRID_TOML)
spec = ExperimentSpec.from_toml(OUT / "grid.toml", Registries(MY_CHUNKERS, SUMMARIZERS, ROLLUPS, RECALLERS))
t0 = time.perf_counter()
df = run_experiment(spec, OUT / "run")
print(f"{df['cell_id'].nunique()} cells, {len(df)} tidy rows in {time.perf_counter() - t0:.1f} s")

# %% [markdown]
# ### Results
#
# Two measures, per chunker and size, each a mean over probes with its 95% bootstrap CI and
# **n** probes:
#
# * **`answer_in_context@512tok`** (the headline): is the probe's answer in the context that
#   recall fills with 512 rendered tokens? Every chunker gets the same room, so one with bigger
#   chunks cannot win by holding more turns per hit.
# * **`evidence_recall@5`**: is an evidence turn in the top 5 chunks? It rises with chunk size
#   for any chunker, so compare it only at matched sizes (the mean chunk size is in the table).
#
# Chunks never cross a flush (by default, a session end), so once the budget is larger than a
# whole session, every chunker makes one chunk per session and they all coincide.

# %%
HEADLINE, RECALL = f"answer_in_context@{CONTEXT}tok", "evidence_recall@5"
df["size_tokens"] = df["chunker.max_tokens"].fillna(df["chunker.max_chars"].map({c: t for t, c in AS_CHARS.items()}))
df["size_tokens"] = df["size_tokens"].astype(int)
keys = ["chunker", "size_tokens"]
quality = aggregate(df[df["metric"].isin([HEADLINE, RECALL, "mrr"])], by=keys)
memory = df[df["metric"].isin(["memory_entries", "memory_tokens"])].pivot_table(index=keys, columns="metric",
                                                                                  values="value", aggfunc="sum")
memory["mean chunk tokens"] = memory["memory_tokens"] / memory["memory_entries"]
table = quality.pivot_table(index=keys, columns="metric", values="mean")[[HEADLINE, RECALL, "mrr"]].round(3)
table = table.join(quality.pivot_table(index=keys, columns="metric", values="n")[[HEADLINE, RECALL]]
                   .astype(int).add_prefix("n "))
table = table.join(memory[["memory_entries", "mean chunk tokens"]].round(1))
table.to_csv(OUT / "property_testing_results.csv")
table

# %% [markdown]
# Paired on the same probes with lyra-lab's `compare`: for each matched size, sentence_pack
# minus token_budget, with a 95% bootstrap CI and a sign-flip p-value. With one or two
# conversations there are too few to resample whole conversations (`compare`'s default), so
# each probe is its own unit (`cluster=None`): read the intervals as about these probes.

# %%
label = df.groupby(keys)["pipeline"].first()  # (chunker, size) -> pipeline label in the results
paired = []
for size in SIZES:
    for metric in (HEADLINE, RECALL):
        c = compare(df, label[("sentence_pack", size)], label[("token_budget", size)], metric, cluster=None)
        per_probe = df[df["metric"] == metric].pivot_table(index=["conversation_id", "probe_id"],
                                                          columns="pipeline", values="value")
        differing = per_probe[label[("sentence_pack", size)]] != per_probe[label[("token_budget", size)]]
        paired.append({"size_tokens": size, "metric": metric,
                       "sentence_pack": per_probe[label[("sentence_pack", size)]].mean(),
                       "token_budget": per_probe[label[("token_budget", size)]].mean(),
                       "difference": c.difference, "ci_low": c.ci_low, "ci_high": c.ci_high, "p": c.p_value,
                       "n": c.n_probes, "probes_differing": int(differing.sum())})
paired = pd.DataFrame(paired)
paired.round(3)

# %%
n_probes = {m: int(quality.loc[quality["metric"] == m, "n"].max()) for m in (HEADLINE, RECALL)}
fig, axes = plt.subplots(1, 2, figsize=(10, 4.4), sharex=True, sharey=True, layout="constrained")
for ax, metric, what in zip(axes, (HEADLINE, RECALL),
                            (f"answer in the {CONTEXT}-token context", "evidence turn in the top 5 chunks")):
    points = quality[quality["metric"] == metric]
    for (name, part), marker, dodge in zip(points.groupby("chunker"), ["o", "s"], [0.95, 1.05]):
        part = part.sort_values("size_tokens")  # dodged sideways so matched sizes do not hide each other
        ax.errorbar(part["size_tokens"] * dodge, part["mean"],
                    yerr=[part["mean"] - part["ci_low"], part["ci_high"] - part["mean"]],
                    marker=marker, capsize=3, label=name)
    ax.set_xscale("log")
    ax.set_xticks(SIZES, [str(t) for t in SIZES])
    ax.minorticks_off()
    ax.set_ylim(0, 1.02)
    ax.set_title(f"{metric}: {what}\nthe same n = {n_probes[metric]} probes at every point", fontsize=10)
    ax.legend(loc="lower right")
axes[0].set_ylabel("share of probes (mean, 95% bootstrap CI)")
fig.supxlabel(f"chunk budget (o200k_base tokens; sentence_pack's characters at {CHARS_PER_TOKEN:.2f} per token)",
              fontsize=10)
fig.suptitle("sentence_pack (ours) vs token_budget, BM25 recall, no LLM, synthetic corpus")
fig.savefig(OUT / "property_testing_grid.png", dpi=120)
plt.show()


# %% [markdown]
# ## 6. What this notebook found

# %%
def verdict(row) -> str:
    """The comparison's verdict in words: which chunker does better, with its CI and p, or no difference."""
    ci = f"{row['difference']:+.2f}, 95% CI [{row['ci_low']:.2f}, {row['ci_high']:.2f}], p = {row['p']:.2f}"
    if row["probes_differing"] == 0:
        return "the same result on every probe"
    if row["ci_low"] > 0 or row["ci_high"] < 0:
        better = "sentence_pack" if row["ci_low"] > 0 else "token_budget"
        if row["p"] < 0.05:
            return f"{better} does better ({ci})"
        return f"weak evidence that {better} does better ({ci}: the interval excludes 0, the sign-flip test does not)"
    return f"no clear difference ({ci}: the interval includes 0)"


lines = [
    f"The first sentence_pack broke the invariant {failure.invariant!r}; hypothesis shrank the failure to "
    f"{shrunk_summary['turns']} turns holding {shrunk_summary['text_chars']} characters of text, where a chunk of "
    f"{max(len(c.text) for c in over)} characters exceeded the {BUDGET_CHARS}-character budget.",
    f"The fixed sentence_pack kept every chunker invariant on {fixed_examples} generated conversations.",
    f"The first drop_oldest broke a rollup invariant ({rollup_failure.detail}) in a run shrunk to {len(steps)} steps; "
    f"the fixed one kept them all over {rollup_fixed_runs} generated rule sequences.",
]
size_of = memory["mean chunk tokens"]
for size, rows in paired.groupby("size_tokens"):
    head, rec = (rows[rows["metric"] == m].iloc[0] for m in (HEADLINE, RECALL))
    lines.append(
        f"At a chunk budget of {size} tokens (mean chunk {size_of[('sentence_pack', size)]:.0f} tokens for sentence_pack, "
        f"{size_of[('token_budget', size)]:.0f} for token_budget), the answer is in the {CONTEXT}-token context for "
        f"{head['sentence_pack']:.2f} vs {head['token_budget']:.2f} of the same {int(head['n'])} probes (the two differ on "
        f"{int(head['probes_differing'])}): {verdict(head)}. Evidence recall@5 is {rec['sentence_pack']:.2f} vs "
        f"{rec['token_budget']:.2f} (n = {int(rec['n'])}): {verdict(rec)}.")
significant = paired[(paired["p"] < 0.05) & ((paired["ci_low"] > 0) | (paired["ci_high"] < 0))]
lines.append(f"Of {len(paired)} paired comparisons, {len(significant)} found a difference at p < 0.05; "
             f"about {0.05 * len(paired):.1f} would by chance alone if the chunkers were equally good.")
lines.append(f"{'Full' if FULL else 'Small'} mode ran in {time.perf_counter() - started:.0f} s.")
findings = {"mode": "full" if FULL else "small", "buggy_chunker_invariant": failure.invariant,
            "shrunk": shrunk_summary, "chunk_budget": BUDGET_CHARS, "fixed_chunker_examples": fixed_examples,
            "buggy_rollup_detail": rollup_failure.detail, "shrunk_rollup_steps": len(steps),
            "rollup_budget": ROLLUP_BUDGET, "fixed_rollup_machines": rollup_fixed_runs,
            "paired": paired.to_dict(orient="records"), "statements": lines}
(OUT / "property_testing_findings.json").write_text(json.dumps(findings, indent=2, default=float))
print("\n\n".join(lines))
