"""An agent's connection to a Redis Cluster, with only the commands an agent's Redis user may
run. redis-py's own ``RedisCluster`` asks ``COMMAND`` at start and ``COMMAND GETKEYS`` for every
XREADGROUP and XREAD, which an agent confined by ``REACH_AGENT_ACL=on`` may not run
(docs/PROTOCOL.md section 1): this client learns the slot map from ``CLUSTER SLOTS`` (allowed),
sends each command to the master of its key's slot, and follows MOVED and ASK."""

import logging
import threading
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, TypeVar

import redis
from redis.crc import REDIS_CLUSTER_HASH_SLOTS, key_slot
from redis.exceptions import ClusterDownError, ClusterError

log = logging.getLogger("agent_reach")
T = TypeVar("T")
HostPort = Tuple[str, int]

#: Tries of one command across redirections and lost nodes.
MAX_REDIRECTS = 5


class ClusterClient:
    """The subset of ``redis.Redis`` an agent uses (``xreadgroup``, ``xread``, ``xack``,
    ``xclaim``, ``execute_command`` of a keyed command, ``close``), each command on the master of
    its first key's slot. Every stream one call names must share that slot (hash tags)."""

    def __init__(
        self,
        seeds: Sequence[HostPort],
        client_kwargs: Mapping[str, Any],
        connect: Optional[Callable[[HostPort], Any]] = None,
    ) -> None:
        """``connect(address)`` makes a node's client (default ``redis.Redis`` with ``client_kwargs``)."""
        if not seeds:
            raise ValueError("a Redis Cluster needs at least one seed node")
        self._seeds = list(seeds)
        kwargs = dict(client_kwargs)
        self._connect = connect or (lambda a: redis.Redis(host=a[0], port=a[1], **kwargs))
        self._nodes: Dict[HostPort, redis.Redis] = {}
        self._slots: List[Optional[HostPort]] = [None] * REDIS_CLUSTER_HASH_SLOTS
        self._lock = threading.Lock()
        self.refresh()

    # ---- the commands an agent runs ---------------------------------------------------------

    def xreadgroup(self, groupname: str, consumername: str, streams: Mapping[str, str], **kwargs: Any) -> Any:
        return self._on(next(iter(streams)), lambda r: r.xreadgroup(groupname, consumername, streams, **kwargs))

    def xread(self, streams: Mapping[str, str], **kwargs: Any) -> Any:
        return self._on(next(iter(streams)), lambda r: r.xread(streams, **kwargs))

    def xack(self, name: str, groupname: str, *ids: str) -> Any:
        return self._on(name, lambda r: r.xack(name, groupname, *ids))

    def xclaim(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return self._on(name, lambda r: r.xclaim(name, *args, **kwargs))

    def execute_command(self, command: str, key: str, *args: Any) -> Any:
        """A command whose first argument is its key (``XADD <stream> * ...``)."""
        return self._on(key, lambda r: r.execute_command(command, key, *args))

    def close(self) -> None:
        with self._lock:
            nodes, self._nodes = list(self._nodes.values()), {}
        for node in nodes:
            node.close()

    # ---- routing ----------------------------------------------------------------------------

    def refresh(self) -> None:
        """Reads ``CLUSTER SLOTS`` from the first node that answers (known masters, then seeds)."""
        last: Optional[Exception] = None
        with self._lock:
            candidates = list(dict.fromkeys([*(n for n in self._slots if n is not None), *self._seeds]))
        for address in candidates:
            try:
                table = self._node(address).execute_command("CLUSTER SLOTS")
            except redis.RedisError as err:
                last = err
                continue
            slots: List[Optional[HostPort]] = [None] * REDIS_CLUSTER_HASH_SLOTS
            for row in table:
                start, end, master = int(row[0]), int(row[1]), row[2]
                host = master[0] or address[0]  # an empty host: the node asked
                for slot in range(start, end + 1):
                    slots[slot] = (host, int(master[1]))
            with self._lock:
                self._slots = slots
            return
        raise redis.ConnectionError(f"no seed of the Redis Cluster answered CLUSTER SLOTS: {last}")

    def _node(self, address: HostPort) -> redis.Redis:
        with self._lock:
            node = self._nodes.get(address)
            if node is None:
                node = self._nodes[address] = self._connect(address)
            return node

    def _on(self, key: str, call: Callable[[redis.Redis], T]) -> T:
        address = self._slots[key_slot(key.encode("utf-8"))]
        asking = False
        for attempt in range(MAX_REDIRECTS):
            if address is None:
                self.refresh()
                address = self._slots[key_slot(key.encode("utf-8"))]
                if address is None:
                    raise ClusterDownError(f"no master serves the slot of {key}")
            node = self._node(address)
            try:
                if asking:
                    # ASKING may be refused to a confined agent: then the slot's move ends first.
                    try:
                        node.execute_command("ASKING")
                    except redis.ResponseError:
                        time.sleep(0.05 * (attempt + 1))
                return call(node)
            except redis.ResponseError as err:
                kind, _, rest = str(err).partition(" ")
                if kind not in ("MOVED", "ASK"):
                    raise
                target = rest.split(" ")[-1]
                host, _, port = target.rpartition(":")
                address = (host or address[0], int(port))
                asking = kind == "ASK"
                if kind == "MOVED":
                    log.debug("slot of %s moved to %s; refreshing the slot map", key, target)
                    self.refresh()
            except (redis.ConnectionError, redis.TimeoutError):
                if attempt == MAX_REDIRECTS - 1:
                    raise
                time.sleep(0.1 * (attempt + 1))
                self.refresh()
                address = self._slots[key_slot(key.encode("utf-8"))]
        raise ClusterError(f"too many redirections for {key}")
