"""The streams an agent reads and the order it reads them in (docs/PROTOCOL.md section 3, and
section 4, "Pull agents"): its inbox, and for a pull agent its capabilities' pools, each pool
three streams by priority band. Never more entries in all than free slots: XREADGROUP's COUNT
bounds each stream of a call, so streams are read one per call."""

import logging
from typing import Any, Dict, List, Sequence, Tuple

import redis

log = logging.getLogger("agent_reach")

#: One entry read: (stream, entry id, fields).
Entry = Tuple[str, str, Dict[str, str]]


def band_rank(stream: str) -> int:
    """A pool stream's band: 2 for ``<pool>:b2`` (priorities 5-9), 1 for ``:b1`` (1-4), else 0."""
    if stream.endswith(":b2"):
        return 2
    if stream.endswith(":b1"):
        return 1
    return 0


def hash_tag(key: str) -> str:
    """The part of a key Redis Cluster hashes: the text between the first ``{`` and the next ``}``
    when not empty, else the whole key. Keys with one tag are in one slot."""
    start = key.find("{")
    if start != -1:
        end = key.find("}", start + 1)
        if end > start + 1:
            return key[start + 1 : end]
    return key


class StreamReader:
    """Reads the inbox and the pools of one agent instance for ``free`` slots.

    A sweep reads one stream per call without blocking, the inbox first (probes, re-routed tasks),
    then every pool's most urgent band before any less urgent one, FIFO within a stream, until
    the free slots are taken. Only when a whole sweep found nothing does it block, COUNT 1 each,
    on at most ``free`` streams of the hash slot that holds the most of them (one XREADGROUP may
    name keys of one slot only, on a Cluster): a pool's bands, those that gave entries most
    recently first (a shallow pool's usual band), then most urgent first. An entry that lands on
    another stream meanwhile waits at most one block, until the next sweep.
    """

    def __init__(self, inbox: str, pools: Sequence[str], group: str, consumer: str) -> None:
        ranked = sorted(pools, key=band_rank, reverse=True)  # stable: the reply's order within a band
        self.streams: List[str] = [inbox, *ranked]
        self.pools = frozenset(pools)
        self.group = group
        self.consumer = consumer
        self._found: Dict[str, int] = {}  # stream -> number of the read that last gave entries
        self._reads = 0

    def read(self, conn: Any, free: int, block_ms: int) -> List[Entry]:
        """Up to ``free`` entries (``free`` >= 1)."""
        if len(self.streams) == 1:
            return self._call(conn, self.streams, free, block_ms)
        out: List[Entry] = []
        for stream in self.streams:
            out += self._call(conn, [stream], free - len(out), None)
            if len(out) >= free:
                return out
        if out:
            return out
        slots: Dict[str, List[str]] = {}
        for s in self.streams:
            slots.setdefault(hash_tag(s), []).append(s)
        widest = max(slots.values(), key=len)  # a pool's bands, rather than the inbox alone
        recent = sorted(widest, key=lambda s: -self._found.get(s, 0))  # stable: urgent first
        return self._call(conn, recent[:free], 1, block_ms)

    def _call(self, conn: Any, streams: Sequence[str], count: int, block_ms: Any) -> List[Entry]:
        try:
            reply = conn.xreadgroup(self.group, self.consumer, {s: ">" for s in streams}, count=count, block=block_ms)
        except redis.ResponseError as err:
            # A pool stream without its group (deleted by hand, say) must not stop the others:
            # skipped until registry-sync makes it again at a registration.
            if not str(err).startswith("NOGROUP") or len(streams) != 1 or streams[0] not in self.pools:
                raise
            log.warning("pool stream %s has no group %s; skipped: %s", streams[0], self.group, err)
            return []
        out = [(_text(stream), entry_id, fields or {}) for stream, entries in (reply or []) for entry_id, fields in entries]
        if out:
            self._reads += 1
            for stream, _, _ in out:
                self._found[stream] = self._reads
        return out


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else value
