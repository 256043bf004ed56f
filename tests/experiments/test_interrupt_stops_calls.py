"""Stopping a run from the API stops its calls (issue 42, case 7).

``run_experiment`` is interrupted as in a notebook (SIGINT to the main thread, from another thread)
while its cells' calls are retrying against a server that answers 503: the calls in flight, on cell
threads, on the summarizers' call threads and on the request loop (streamed) or their own thread
(not streamed), must stop with it.  (Worker processes, which the runner already stopped at once
before issue 42, are checked the same way as a guard.)  Requests the server receives after the interrupt stay within
the backend's ``max_concurrency`` (the attempts already on their way), nothing prints a traceback
(a retry reported to the closed run log did, once per retry), and a resume then completes the run.
"""

from __future__ import annotations

import signal
import textwrap
import threading
import time

import pytest

from lyra_lab.backends import SimulatedServer
from lyra_lab.experiments import ExperimentSpec, RunOptions, run_experiment
from lyra_lab.runs import read_log

CONCURRENCY = 2


def spec_of(tmp_path, corpus_path, url: str, stream: bool, executor: str) -> ExperimentSpec:
    backend = (f'{{ preset = "simulated", base_url = "{url}", max_concurrency = {CONCURRENCY}, max_attempts = 8, '
               f'retry_base_s = 0.2, retry_max_s = 0.4, timeout_s = 5, stream = {str(stream).lower()} }}')
    path = tmp_path / "exp.toml"
    path.write_text(textwrap.dedent(f"""
        name = "interrupted"
        [corpus]
        path = "{corpus_path}"
        [grid]
        chunkers = [{{ name = "turn_window", max_turns = 2 }}]
        summarizers = [{{ name = "map_reduce", max_tokens = 8, merge_max_tokens = 8, chunk_timeout_s = 60 }}]
        recallers = ["bm25"]
        [run]
        backends = [{backend}]
        embedders = ["none"]
        ks = [1]
        cache = "run"
        executor = "{executor}"
        max_cells = {1 if executor == "serial" else 2}
        """), encoding="utf-8")
    return ExperimentSpec.from_toml(path)


@pytest.mark.parametrize("executor, stream", [("threads", True), ("threads", False), ("serial", True),
                                              ("processes", True)],
                         ids=["threads-request-loop", "threads-thread", "serial", "processes"])
def test_an_interrupt_stops_every_call_and_its_retries_and_a_resume_completes(executor, stream, tmp_path,
                                                                               corpus_path, capfd, caplog):
    with SimulatedServer(latency_s=0.05, default_max_tokens=8) as server:
        spec = spec_of(tmp_path, corpus_path, server.base_url, stream, executor)
        server.fail_matching("503")  # every request, every attempt: the calls sit in their retries
        main, sent = threading.main_thread().ident, []

        def interrupt() -> None:
            deadline = time.monotonic() + 30
            while len(server.chat_log()) < 6 and time.monotonic() < deadline:
                time.sleep(0.01)
            sent.append(time.monotonic())
            signal.pthread_kill(main, signal.SIGINT)  # Ctrl-C in a notebook: the main thread's interrupt

        threading.Thread(target=interrupt, daemon=True).start()
        run_dir = tmp_path / "run"
        with pytest.raises(KeyboardInterrupt):
            run_experiment(spec, run_dir, RunOptions(progress=False))
        time.sleep(3.0)  # the backoffs are 0.2-0.4 s: the calls left running would have retried many times
        after = [r for r in server.chat_log() if r.received > sent[0]]
        assert len(after) <= CONCURRENCY, [(round(r.received - sent[0], 3), r.outcome) for r in after]
        err = capfd.readouterr().err
        assert "Traceback" not in err and "is closed" not in err, err[-2000:]
        # a log record with a traceback would print one on a notebook's stderr (pytest captures it here)
        late = [r for r in caplog.records if r.exc_info or "retry sink" in r.getMessage()]
        assert late == [], [r.getMessage() for r in late]
        assert any(e["event"] == "run_interrupted" for e in read_log(run_dir / "log.jsonl"))

        server.reset()  # the faults are over: the resume completes the run
        df = run_experiment(spec, run_dir, RunOptions(progress=False))
        assert df.attrs["failed_cells"] == [] and df["cell_id"].nunique() == 2
        assert (df["degraded"] == 0).all()
