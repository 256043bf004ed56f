"""Session gists: one short gist per session, refreshed as the session grows; raw turns stay."""

from __future__ import annotations

from dataclasses import dataclass

from lyra_lab.memory import EntryKind, MemoryEntry
from lyra_lab.rollup import _prompts
from lyra_lab.rollup._base import ROLLUPS, BaseRollup, Compaction, Edit, Written, condensed, skip, transcript
from lyra_lab._params import param


def _latest_session(sessions: dict[str, list[MemoryEntry]]) -> str | None:
    """The session holding the latest-ending turn (ties: the one seen last)."""
    latest, when = None, None
    for sid, turns in sessions.items():
        for turn in turns:
            if turn.end is not None and (when is None or turn.end >= when):
                latest, when = sid, turn.end
    return latest if latest is not None else next(reversed(sessions), None)


def gist_id(conversation_id: str, session_id: str) -> str:
    return f"gist:{conversation_id}:{session_id}"


@ROLLUPS.register("session_gist")
@dataclass(frozen=True)
class SessionGist(BaseRollup):
    """A gist (kind ``gist``, level 1) per session, for tiered recall and session-level context.

    A session's gist is (re)written once ``every_turns`` raw turns of it are
    not yet covered by its gist; the new gist refines the previous one with
    those turns (one LLM call, not a re-read of the whole session) and
    replaces it under the same id.  With ``gist_closed_sessions`` a session
    that is over (a later session has begun) gets its final gist for any
    uncovered turns, so short sessions are not left without one; the latest
    session waits for ``every_turns``.  Raw turns are kept, so this rollup does
    not enforce ``budget`` (it reports the token figures only).  A failed LLM
    call changes nothing and the report carries ``error``.
    """

    every_turns: int = param(20, ge=1, doc="uncovered raw turns of a session that make its gist be rewritten.")
    max_tokens: int = param(200, ge=1, doc="the completion limit of each gist call.")
    gist_closed_sessions: bool = param(True, doc="give a session that is over its final gist, however few turns "
                                                 "it has left uncovered.")

    def step(self, compaction: Compaction) -> Edit:
        store, conversation_id = compaction.store, compaction.conversation_id
        sessions: dict[str, list[MemoryEntry]] = {}
        for entry in compaction.before:
            if entry.kind == EntryKind.TURN:
                for sid in entry.session_ids:
                    sessions.setdefault(sid, []).append(entry)
        latest = _latest_session(sessions)
        written: list[MemoryEntry] = []
        for sid, turns in sessions.items():
            gid = gist_id(conversation_id, sid)
            old = store.get(gid) if gid in store else None
            covered = set(old.turn_ids) if old else set()
            new = [t for t in turns if not set(t.turn_ids) <= covered]
            closed = self.gist_closed_sessions and sid != latest
            if len(new) < (1 if closed else self.every_turns):
                continue
            written.append(self._gist(old, new, gid, sid, compaction))
        if not written:
            return skip("no session needs a new gist")
        return Edit(f"gisted {len(written)} session(s)", add=written,
                    remove=[g.id for g in written if g.id in store])

    def _gist(self, old: MemoryEntry | None, new: list[MemoryEntry], gid: str, sid: str,
              compaction: Compaction) -> MemoryEntry:
        previous = _prompts.GIST_PREVIOUS.format(gist=old.text) if old else ""
        completion = compaction.ask(_prompts.GIST.format(previous=previous, content=transcript(new)), self.max_tokens,
                                    f"gist of session {sid}")
        written = Written(gid, new[0].conversation_id, EntryKind.GIST, completion.text.strip(),
                          {"rollup": "session_gist", "model": completion.model})
        return condensed(written, [*([old] if old else []), *new], session_ids=(sid,))
