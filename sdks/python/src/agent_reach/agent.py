"""A worker agent: registers, heartbeats, reads its inbox, runs handlers in threads and reports
every stage on its acks stream (docs/PROTOCOL.md). The TypeScript worker-sdk is the reference."""

import json
import logging
import re
import signal
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional

import redis

from .codecs import (
    MAX_RENEW_TASK_IDS,
    PROBE_CAPABILITY,
    MalformedEntry,
    decode_task,
    encode_ack,
    failure_code,
    placement_miss,
)
from .card import merge_placement, read_card
from .client import ReachClient
from .connection import RedisConnection
from .probe import HealthCheck, probe_outcome
from .reader import StreamReader
from .runtime import RuntimeFigures
from .registry import ReachHttpError, RegistryClient
from .settings import default, setting
from .signature import with_signature
from .task import Task, TaskFailed
from .tracing import TaskTrace

log = logging.getLogger("agent_reach")

#: How long one blocking read waits, so that a stop is seen within it.
READ_BLOCK_MS = 1000
#: The consumer a pool entry this agent may not take is handed to (section 4, placement).
RELEASED_CONSUMER = "__released"


Handler = Callable[[Task], Any]


class Agent:
    """One agent instance. ``run()`` blocks until SIGINT/SIGTERM or ``stop()``, then drains.

    ``handlers`` maps each capability to a function of a :class:`Task`: its return value (JSON)
    completes the task; :class:`TaskFailed` fails it with its code; any other exception fails it
    as ``HANDLER_ERROR``, retryable.

    ``redis_url`` defaults to ``redis://127.0.0.1:6379`` and ``api_key`` to ``REACH_KEY`` from the
    environment (:func:`agent_reach.setting`). ``redis_connection`` instead of ``redis_url`` adds
    TLS files, credentials, Sentinel or a Redis Cluster: ``RedisConnection.from_env()`` reads
    them from REDIS_URL, REDIS_TLS_*, REDIS_USERNAME, REDIS_PASSWORD, REDIS_SENTINELS,
    REDIS_SENTINEL_NAME and REDIS_CLUSTER_NODES.

    ``channel="pull"`` makes a batch agent: besides its inbox it reads its capabilities' pools,
    the most urgent priority band first, and releases unread a pool task whose placement (a strict
    region, tags) it does not offer. ``health`` is asked on every liveness probe: ``False``, an
    exception or no answer within ``health_timeout_s`` fails the probe (``HEALTH_CHECK_FAILED``).
    It may return a dict instead, ``{"ok": bool, "dependencies": {name: {"ok": bool,
    "latency_ms": n, "detail": str}}}``, to say which dependencies are up: without ``ok`` the
    probe passes only when every dependency's ``ok`` is True, a failure names the ones down, and
    the probe's ack carries the answer, cleaned, as its ``health`` field (JSON text).

    ``card`` (an A2A AgentCard, inline) or ``card_url`` (fetched by registry-sync; not for a pull
    agent) registers the agent with its card: every skill needs a handler, and the card's
    placement extension adds region (unless given) and tags.

    ``ready=False`` starts in two phases: registered ``STARTING``, the agent gets no task until
    :meth:`mark_ready` (a model still loading). ``router_url`` (default ``REACH_ROUTER_URL``) is
    where a handler's child tasks go (:meth:`Task.submit`, :meth:`Task.run`).

    ``observe=True`` starts in observation mode: liveness probes only, no caller task, until an
    operator promotes the agent (``reach agents promote <agent_id>``).
    """

    def __init__(
        self,
        registry_url: str,
        agent_id: str,
        handlers: Mapping[str, Handler],
        *,
        redis_url: Optional[str] = None,
        max_concurrency: int = 4,
        instance_id: Optional[str] = None,
        api_key: Optional[str] = None,
        region: Optional[str] = None,
        tags: Optional[Iterable[str]] = None,
        meta: Optional[Dict[str, Any]] = None,
        shutdown_timeout_s: float = 30.0,
        channel: str = "push",
        health: Optional[HealthCheck] = None,
        health_timeout_s: float = 5.0,
        redis_connection: Optional[RedisConnection] = None,
        card: Optional[Mapping[str, Any]] = None,
        card_url: Optional[str] = None,
        ready: bool = True,
        router_url: Optional[str] = None,
        observe: bool = False,
    ) -> None:
        if not handlers:
            raise ValueError("handlers must name at least one capability")
        if channel not in ("push", "pull"):
            raise ValueError(f"channel must be 'push' or 'pull', got {channel!r}")
        if not isinstance(max_concurrency, int) or not 1 <= max_concurrency <= 10000:
            raise ValueError(f"max_concurrency must be an integer from 1 to 10000, got {max_concurrency!r}")
        if health is not None and not callable(health):
            raise TypeError("health must be a function returning True, False or a dict")
        if not isinstance(health_timeout_s, (int, float)) or not 0 < health_timeout_s <= 600:
            raise ValueError(f"health_timeout_s must be a number of seconds from 0 to 600, got {health_timeout_s!r}")
        self.agent_id = agent_id
        self.instance_id = instance_id or f"{agent_id}-{uuid.uuid4().hex[:12]}"
        self.handlers = dict(handlers)
        self.max_concurrency = max_concurrency
        if redis_connection is not None and redis_url is not None:
            raise ValueError("give redis_url or redis_connection, not both")
        self.redis_connection = redis_connection or RedisConnection(url=redis_url or default("redis_url"))
        self.redis_url = self.redis_connection.url
        self.shutdown_timeout_s = shutdown_timeout_s
        self.channel = channel
        self.region = region
        self.tags = own_tags = tuple(tags) if tags is not None else ()
        if card is not None and card_url is not None:
            raise ValueError("give card or card_url, not both")
        if card_url is not None:
            if not isinstance(card_url, str) or not re.match(r"^https?://[^/]", card_url):
                raise ValueError(f"card_url must be an http(s) URL, got {card_url!r}")
            # A pull agent checks pool tasks against its placement: it must know its card.
            if channel == "pull":
                raise ValueError("a pull agent takes its card inline (card), not by card_url")
        if card is not None:
            placement = read_card(card)
            missing = [c for c in placement.skills if c not in self.handlers]
            if missing:
                raise ValueError(f"card skills without a handler: {', '.join(missing)}")
            self.region, self.tags = merge_placement(region, self.tags, placement)
        self.health = health
        self.health_timeout_s = float(health_timeout_s)
        key = api_key if api_key is not None else setting("api_key")
        self.registry = RegistryClient(registry_url, key)
        self._router_url = router_url
        self._api_key = key
        self._client: Optional[ReachClient] = None
        self._body: Dict[str, Any] = {
            "agent_id": agent_id,
            "instance_id": self.instance_id,
            "capabilities": list(self.handlers),
            "max_concurrency": max_concurrency,
        }
        if channel == "pull":
            self._body["channel"] = channel
        if not ready:
            self._body["ready"] = False
        if observe:
            # Probes only until an operator (or the agent, with its token) promotes it.
            self._body["observe"] = True
        if card is not None:
            self._body["card"] = dict(card)
        if card_url is not None:
            self._body["card_url"] = card_url
        if region is not None:
            self._body["region"] = region
        if tags is not None:
            self._body["tags"] = list(own_tags)
        if meta is not None:
            self._body["meta"] = meta
        #: ``starting``, ``running``, ``draining``, ``closed`` or ``fenced``.
        self.state = "starting"
        self.session: Dict[str, Any] = {}
        self._ack_key: Optional[str] = None
        self._redis: Any = None  # redis.Redis, or a ClusterClient
        self._reader: Optional[StreamReader] = None
        self._lock = threading.Lock()
        self._stopping = threading.Lock()
        self._running: Dict[str, Task] = {}  # task_id -> running task (received)
        self._free = threading.Semaphore(max_concurrency)
        self._stop = threading.Event()  # stop reading (drain or fence)
        self._drained = False  # an operator drained it: stop once the registry removes it
        self._ready = threading.Event()  # reading new tasks (a two-phase start clears it)
        if ready:
            self._ready.set()
        self._two_phase = not ready  # heartbeats then say whether the agent is ready
        self._halt = threading.Event()  # stop heartbeats, renewals and the control reader
        self._pool = ThreadPoolExecutor(max_concurrency, thread_name_prefix="reach-task")
        self._threads: List[threading.Thread] = []

    # ---- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Registers and starts the reader, heartbeat, renewal and control threads."""
        self._register()
        self.state = "running"
        for name, target in (
            ("reach-read", self._read_loop),
            ("reach-heartbeat", self._heartbeat_loop),
            ("reach-renew", self._renew_loop),
            ("reach-control", self._control_loop),
        ):
            t = threading.Thread(target=target, name=name, daemon=True)
            t.start()
            self._threads.append(t)
        log.info("registered %s (%s) epoch %s", self.agent_id, self.instance_id, self.session["epoch"])

    @property
    def client(self) -> ReachClient:
        """The router client a handler's :meth:`Task.submit` and :meth:`Task.run` use, made on
        first use: the agent's key, a callback topic of this instance's own."""
        with self._lock:
            if self._client is None:
                self._client = ReachClient(self._router_url, api_key=self._api_key,
                                           callback_topic=f"agent-{uuid.uuid4().hex}")
            return self._client

    def mark_ready(self, ready: bool = True) -> None:
        """Two-phase start (``ready=False``): the agent is ``STARTING`` and reads nothing until
        this is called. ``mark_ready(False)`` later stops new tasks, the running ones going on (a
        model reloading). Sends a heartbeat at once; every later one repeats the state."""
        self._two_phase = True
        self._body["ready"] = ready
        if ready:
            self._ready.set()
        else:
            self._ready.clear()
        if self.state != "running":
            return
        try:
            self.registry.heartbeat(self.session, {"inflight": self._inflight(), "ready": ready})
        except (ReachHttpError, OSError) as err:
            log.warning("heartbeat with ready=%s failed; the next one repeats it: %s", ready, err)

    def run(self) -> str:
        """Starts, serves until SIGINT/SIGTERM (main thread) or :meth:`stop`, drains; the final state."""
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, lambda *_: self._stop.set())
        self.start()
        while not self._stop.wait(0.2):
            pass
        return self.stop()

    def stop(self) -> str:
        """Graceful drain: stop reading, finish in-flight tasks (up to ``shutdown_timeout_s``),
        then deregister (not when fenced). Returns the final state, ``closed`` or ``fenced``;
        idempotent: a second call waits for the first and returns the same."""
        with self._stopping:
            if not self._halt.is_set():
                self._drain()
            return self.state

    def _drain(self) -> None:
        self._stop.set()
        if self.state == "running":
            self.state = "draining"
        for t in self._threads[:1]:
            t.join()
        deadline = time.monotonic() + self.shutdown_timeout_s
        while self._inflight() > 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        if self._inflight() > 0:
            log.warning("shutdown timeout: %d tasks still running are left to the server", self._inflight())
            for task in list(self._running.values()):
                task.cancelled.set()
        self._pool.shutdown(wait=self._inflight() == 0)
        self._halt.set()
        for t in self._threads[1:]:
            t.join()
        if self._redis is not None:
            self._redis.close()
        if self._client is not None:
            self._client.close()
        if self.state != "fenced" and self._drained:
            self.state = "closed"  # the operator's drain removed it: nothing to deregister
        elif self.state != "fenced":
            try:
                self.registry.deregister(self.session)
                log.info("deregistered")
            except (ReachHttpError, OSError) as err:
                log.warning("deregister failed; the registry lets the lease run out: %s", err)
            self.state = "closed"

    def _inflight(self) -> int:
        with self._lock:
            return len(self._running)

    def _register(self) -> None:
        reply = self.registry.register(self._body)
        self._adopt(reply)

    def _adopt(self, reply: Dict[str, Any]) -> None:
        """Takes a register reply (or a heartbeat's new credentials): session, ack key, Redis."""
        with self._lock:
            self.session = {**self.session, **reply}
            if reply.get("ack_key"):
                self._ack_key = reply["ack_key"]
            if "redis" in reply or self._redis is None:
                creds = reply.get("redis") or {}
                old = self._redis
                self._redis = self.redis_connection.connect(creds.get("username"), creds.get("password"))
                if old is not None:
                    old.close()
            s = self.session
            self._reader = StreamReader(s["stream"], s.get("pools") or [], s["group"], self.instance_id)

    def _fence(self, err: Exception) -> None:
        """A newer instance took over (409 STALE_EPOCH): stop reading and heartbeating; in-flight
        tasks finish and report under the old epoch (their acks are refused)."""
        if self.state == "fenced":
            return
        log.error("fenced: a newer instance of %s took over; reading and heartbeats stopped (%s)", self.agent_id, err)
        self.state = "fenced"
        self._stop.set()

    # ---- reading and running -----------------------------------------------------------------

    def _read_loop(self) -> None:
        while not self._stop.is_set():
            if not self._ready.wait(0.2) or not self._free.acquire(timeout=0.2):
                continue
            free = 1
            while self._free.acquire(blocking=False):
                free += 1
            try:
                entries = self._read(free)
            except redis.RedisError as err:
                log.warning("inbox read failed: %s", err)
                entries = []
                self._stop.wait(0.5)
            for stream, entry_id, fields in entries:
                free -= 1
                try:
                    self._take(stream, entry_id, fields)
                except Exception:  # noqa: BLE001 (the reader must outlive any one entry)
                    log.exception("entry %s could not be taken", entry_id)
                    self._free.release()
            for _ in range(free):
                self._free.release()

    def _read(self, count: int) -> List[Any]:
        return self._reader.read(self._redis, count, READ_BLOCK_MS)

    def _take(self, stream: str, entry_id: str, fields: Dict[str, str]) -> None:
        """Sends the receipt of an entry and runs it on the pool (its slot is already held)."""
        pooled = stream in self._reader.pools
        try:
            msg = decode_task(fields)
            task = Task(self, msg, stream, entry_id, pooled)
        except (MalformedEntry, ValueError) as err:
            log.warning("malformed entry %s of %s acknowledged and skipped: %s", entry_id, stream, err)
            self._xack(stream, entry_id)
            self._free.release()
            return
        miss = placement_miss(msg, self.region, self.tags, self.handlers) if pooled else None
        if miss is not None:
            # Not ours to run (section 4, placement): no ack; the entry waits, unacknowledged,
            # under the released consumer until registry-sync puts it back for an agent that may.
            log.info("pool task %s asks for a %s this agent does not offer; released", msg.task_id, miss)
            try:
                self._redis.xclaim(stream, self.session["group"], RELEASED_CONSUMER, 0, [entry_id], justid=True)
            except redis.RedisError as err:
                log.warning("could not release %s; the server takes it back after the receipt timeout: %s", entry_id, err)
            self._free.release()
            return
        started = time.monotonic()
        try:
            self._ack(task, "received")
        except redis.RedisError as err:
            # Not run without its receipt: the server takes the entry back after the receipt timeout.
            log.warning("receipt of %s not sent; left to the server: %s", task.task_id, err)
            self._free.release()
            return
        with self._lock:
            self._running[task.task_id] = task
        self._pool.submit(self._run, task, started)

    def _run(self, task: Task, started: float) -> None:
        # Spans only while OpenTelemetry is installed and the entry names the deliver span; probes
        # are no caller's task and get none.
        probe = task.capability == PROBE_CAPABILITY
        spans = TaskTrace(task.task_id, task.capability, task.attempt, "" if probe else task.traceparent)
        try:
            if probe:
                outcome: Dict[str, Any] = probe_outcome(task.payload_text, self.health, self.health_timeout_s)
            else:
                handler = self.handlers.get(task.capability)
                if handler is None:
                    raise TaskFailed(f"no handler for {task.capability}", "NO_HANDLER", True)
                with spans.handle():
                    result = handler(task)
                outcome = {"stage": "completed", "result": json.dumps(result, separators=(",", ":"))}
        except TaskFailed as err:
            outcome = {"stage": "failed", "error": str(err), "error_code": failure_code(err.code), "retryable": err.retryable}
        except (TypeError, ValueError) as err:
            outcome = {"stage": "failed", "error": f"result is not JSON: {err}", "error_code": "RESULT_NOT_JSON", "retryable": False}
        except Exception as err:  # noqa: BLE001 (a handler's failure is the task's)
            log.exception("handler of %s failed", task.task_id)
            outcome = {"stage": "failed", "error": f"{type(err).__name__}: {err}", "error_code": "HANDLER_ERROR", "retryable": True}
        if task.cancelled.is_set() and outcome["stage"] == "completed":
            outcome = {"stage": "failed", "error": "cancelled", "error_code": "CANCELLED", "retryable": False}
        duration_ms = int((time.monotonic() - started) * 1000)
        if outcome["stage"] == "failed":
            spans.failed(outcome["error"])
        try:
            traceparent = spans.ack_traceparent()
            if outcome["stage"] == "completed":
                self._ack(task, "completed", result=outcome["result"], duration_ms=duration_ms,
                          capability=task.capability, health=outcome.get("health"), traceparent=traceparent)
            else:
                self._ack(task, "failed", duration_ms=duration_ms, error=outcome["error"][:4096],
                          error_code=outcome["error_code"], retryable=outcome["retryable"],
                          health=outcome.get("health"), traceparent=traceparent)
            self._xack(task._stream, task._entry_id)
        except redis.RedisError as err:
            log.warning("could not report %s; the server will take it back: %s", task.task_id, err)
        finally:
            spans.end()
            with self._lock:
                self._running.pop(task.task_id, None)
            self._free.release()

    # ---- acks ------------------------------------------------------------------------------

    def _xadd_ack(self, fields: List[str]) -> None:
        key = self._ack_key
        if key:
            fields = with_signature(fields, key)
        self._redis.execute_command("XADD", self.session["acks_stream"], "*", *fields)

    def _ack(self, task: Task, stage: str, **extra: Any) -> None:
        s = self.session
        self._xadd_ack(encode_ack(task_id=task.task_id, stage=stage, agent_id=self.agent_id,
                                  instance_id=self.instance_id, epoch=s["epoch"], attempt=task.attempt,
                                  pool=task._pool_id, message_id=task._entry_id if task._pool_id else None, **extra))

    def _output(self, task: Task, stage: str, **extra: Any) -> None:
        self._ack(task, stage, **extra)

    def _xack(self, stream: str, entry_id: str) -> None:
        self._redis.xack(stream, self.session["group"], entry_id)

    # ---- heartbeat, renewals, cancellation -----------------------------------------------------

    def _heartbeat_loop(self) -> None:
        runtime = RuntimeFigures()
        try:
            self._heartbeats(runtime)
        finally:
            runtime.stop()

    def _heartbeats(self, runtime: RuntimeFigures) -> None:
        while not self._halt.wait(self.session.get("heartbeat_interval_ms", 5000) / 1000):
            if self.state == "fenced":
                return
            inflight = self._inflight()
            try:
                body: Dict[str, Any] = {
                    "inflight": inflight,
                    "status": "busy" if inflight else "idle",
                    "runtime": runtime.take(),
                }
                if self._two_phase:
                    body["ready"] = self._ready.is_set()
                reply = self.registry.heartbeat(self.session, body)
                if "redis" in reply or reply.get("ack_key"):
                    self._adopt(reply)
                if reply.get("status") == "DRAINING" and not self._drained and not self._stop.is_set():
                    self._drained = True
                    log.warning("an operator drained this agent: no new tasks; it stops once the registry "
                                "removes it (start it again to rejoin)")
            except ReachHttpError as err:
                if err.code == "STALE_EPOCH":
                    self._fence(err)
                    return
                if err.code == "AGENT_NOT_FOUND" and self._drained:
                    log.warning("drained by an operator and removed by the registry: stopping")
                    self._stop.set()
                    return
                if err.code == "AGENT_NOT_FOUND" and self.state == "running":
                    log.warning("the registry lost this agent; registering again")
                    try:
                        self._register()
                    except (ReachHttpError, OSError) as again:
                        if isinstance(again, ReachHttpError) and again.code == "STALE_EPOCH":
                            self._fence(again)
                            return
                        log.warning("registering again failed: %s", again)
                else:
                    log.warning("heartbeat refused: %s", err)
            except OSError as err:
                log.warning("heartbeat failed: %s", err)

    def _renew_loop(self) -> None:
        """One ``renew`` ack for every running task each third of the execution lease."""
        while not self._halt.wait(self.session.get("exec_lease_ms", 60000) / 3000):
            if self.state == "fenced":
                return
            with self._lock:
                ids = list(self._running)
            for i in range(0, len(ids), MAX_RENEW_TASK_IDS):
                part = ids[i : i + MAX_RENEW_TASK_IDS]
                s = self.session
                try:
                    self._xadd_ack(encode_ack(task_id=part[0], stage="renew", agent_id=self.agent_id,
                                              instance_id=self.instance_id, epoch=s["epoch"], task_ids=" ".join(part)))
                except redis.RedisError as err:
                    log.warning("renewal failed: %s", err)

    def _control_loop(self) -> None:
        """Reads ``cancel`` notices with plain XREAD on a connection of its own (the pool's)."""
        last = "0-0"
        while not self._halt.is_set() and self.state != "fenced":
            stream = self.session.get("control_stream")
            if not stream:
                return
            try:
                reply = self._redis.xread({stream: last}, block=READ_BLOCK_MS)
            except redis.RedisError as err:
                log.debug("control read failed: %s", err)
                self._halt.wait(0.5)
                continue
            for _, entries in reply or []:
                for entry_id, fields in entries:
                    last = entry_id
                    if fields.get("kind") == "cancel":
                        with self._lock:
                            task = self._running.get(fields.get("task_id", ""))
                        if task is not None:
                            log.info("task %s cancelled", task.task_id)
                            task.cancelled.set()
