"""The agent the e2e test (test/e2e/python-sdk.test.ts) drives: capability `py-work`, whose
payload says what to do: {"sleep_ms": n, "first_attempt_only": true (sleep on attempt 1 only),
"progress": [values], "chunks": [texts], "fail": code, "child": payload of a child task it runs}.
Settings as the example's, the Redis connection settings (REDIS_TLS_*, REDIS_SENTINELS...), plus
WORK_AGENT_INSTANCE_ID, and WORK_READY_AFTER_MS for a two-phase start (ready only that long after
the start). Exit 0 after a drain, 3 when fenced."""

import logging
import os
import sys
import threading
import time

from agent_reach import Agent, RedisConnection, TaskFailed


def work(task):
    p = task.payload
    for value in p.get("progress", []):
        task.progress(value)
    if p.get("chunks"):
        task.stream(*p["chunks"])
    sleep_ms = 0 if p.get("first_attempt_only") and task.attempt > 1 else p.get("sleep_ms", 0)
    end = time.monotonic() + sleep_ms / 1000
    while time.monotonic() < end and not task.cancelled.is_set():
        time.sleep(0.02)
    if p.get("fail"):
        raise TaskFailed("refused by the handler", p["fail"], retryable=False)
    if "child" in p:
        return {"done": p.get("n"), "child": task.run("py-work", p["child"], timeout_s=20)}
    return {"done": p.get("n")}


logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stdout)
agent = Agent(
    os.environ["REACH_REGISTRY_URL"],
    os.environ["REACH_AGENT_ID"],
    {"py-work": work},
    redis_connection=RedisConnection.from_env(),
    router_url=os.environ.get("REACH_ROUTER_URL"),  # REDIS_URL, and REDIS_TLS_*, REDIS_SENTINELS...
    instance_id=os.environ.get("WORK_AGENT_INSTANCE_ID"),
    max_concurrency=4,
    shutdown_timeout_s=20,
    ready="WORK_READY_AFTER_MS" not in os.environ,
)
if "WORK_READY_AFTER_MS" in os.environ:
    threading.Timer(int(os.environ["WORK_READY_AFTER_MS"]) / 1000, agent.mark_ready).start()
sys.exit(0 if agent.run() == "closed" else 3)
