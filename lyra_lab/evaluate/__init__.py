"""Deprecated: ``lyra_lab.evaluate`` was split into ``measures``, ``stats``, ``reports`` and ``runs``.

Every name it offered still imports from here for one release, with a
``DeprecationWarning`` that names its new home (``from lyra_lab.evaluate import
aggregate`` warns "lyra_lab.evaluate.aggregate moved to lyra_lab.stats.aggregate").
The table of where each went is ``lyra_lab._moved.MOVED``; ``CHANGELOG.md`` lists it.
Import from the new homes:

- ``lyra_lab.measures``: what a measure is and how a probe is scored (retrieval metrics, QA, judges);
- ``lyra_lab.matching``: the text rules (normalisation, F1, abstention, retention);
- ``lyra_lab.stats``: bootstrap CIs, aggregation, paired comparisons;
- ``lyra_lab.reports``: tables, figures and the report of a run;
- ``lyra_lab.runs``: a run folder's rows and log.
"""

from lyra_lab._moved import moved_names

__all__ = []  # nothing new lives here: every name is a moved one

__getattr__ = moved_names(__name__)
