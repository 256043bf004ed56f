"""The forecast: what ``lyra-lab plan`` prints, and the one decision of the work a run does.

Holds ``plan(spec)`` (a ``Forecast``: what a run will embed, call, cost and take on this machine;
``forecast_text`` renders it), the dry run of the cells against stand-in models it is counted from
(``_dry_run``), the measured rates of this machine (``_calibrate``), every place the run's text can
reach (``destinations``, ``remote_endpoints``: what consent asks about), and the work to do
(``decide``: new, finished, degraded, failed for good, aliases), which the runner and a resume share.

May import ``grid`` and ``cells`` (through their faces); never ``executors`` nor ``lyra_lab.experiments``
itself: a plan runs nothing.  The runner, ``rescore`` and the package's face import it through this face.
"""

from lyra_lab.experiments.forecast._forecast import (BackendForecast, CellForecast, EmbedderForecast, Forecast, Span,
                                                     conversation_controls, plan, remote_endpoints)
from lyra_lab.experiments.forecast._reach import Destination, destinations
from lyra_lab.experiments.forecast._text import forecast_text
from lyra_lab.experiments.forecast._work import Resume, Work, decide

__all__ = [
    "BackendForecast",
    "CellForecast",
    "Destination",
    "EmbedderForecast",
    "Forecast",
    "Resume",
    "Span",
    "Work",
    "conversation_controls",
    "decide",
    "destinations",
    "forecast_text",
    "plan",
    "remote_endpoints",
]
