"""A simulated OpenAI-compatible server on 127.0.0.1: cloud-like load, rate limits and faults without a network.

``SimulatedServer`` serves chat completions (JSON or streamed), models and
embeddings; ``SimulatedSpec`` says how it behaves (latency, generation speed,
concurrency limit, rate limit, fault rates, and ``FaultRule``s: scripted faults
for the requests whose prompt matches); ``RequestRecord`` is one entry of
its request log. Every answer carries ``SIMULATED_FINGERPRINT`` so clients
label it simulated. ``Behaviour``, ``count_pieces`` and ``extractive_reply``
are its behaviour model, importable for tests of it; ``hashed_vectors`` is its
embedding model (the in-process ``HashingEmbedder`` uses it too).  ``SimulatedJudge`` makes
it answer judge prompts CORRECT/WRONG with error rates you set (``SimulatedSpec.judge``).

Layout: ``_behaviour`` (spec, faults, replies) ← ``_serving`` (log, slots) ←
``_sse`` (streamed answers) ← ``_server`` (the HTTP app).
"""

from lyra_lab.backends.simulated._behaviour import (OUTCOMES, SIMULATED_FINGERPRINT, Behaviour, FaultRule,
                                                    SimulatedSpec, count_pieces, extractive_reply, hashed_vectors,
                                                    messages_text)
from lyra_lab.backends.simulated._judge import SimulatedJudge
from lyra_lab.backends.simulated._server import SimulatedServer
from lyra_lab.backends.simulated._serving import RequestRecord

__all__ = [
    "OUTCOMES",
    "SIMULATED_FINGERPRINT",
    "Behaviour",
    "FaultRule",
    "RequestRecord",
    "SimulatedJudge",
    "SimulatedServer",
    "SimulatedSpec",
    "count_pieces",
    "extractive_reply",
    "hashed_vectors",
    "messages_text",
]
