"""The pull agent the e2e test (test/e2e/python-pull.test.ts) drives: capability `py-crunch` on
the pull channel, one slot, in region PULL_REGION with tags PULL_TAGS (comma-separated). Each
handler prints `started <n>` and holds its slot until the file GATE_DIR/<n> exists.
PULL_HEALTH=fail makes its health check say no. Settings as work_agent.py's."""

import logging
import os
import sys
import time

from agent_reach import Agent

gates = os.environ["GATE_DIR"]


def crunch(task):
    n = str(task.payload["n"])
    print(f"started {n}", flush=True)
    while not os.path.exists(os.path.join(gates, n)) and not task.cancelled.is_set():
        time.sleep(0.02)
    return {"n": n}


logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stdout)
agent = Agent(
    os.environ["REACH_REGISTRY_URL"],
    os.environ["REACH_AGENT_ID"],
    {"py-crunch": crunch},
    redis_url=os.environ["REDIS_URL"],
    channel="pull",
    max_concurrency=1,
    region=os.environ.get("PULL_REGION") or None,
    tags=[t for t in os.environ.get("PULL_TAGS", "").split(",") if t],
    health=(lambda: os.environ.get("PULL_HEALTH") != "fail"),
    shutdown_timeout_s=5,
)
sys.exit(0 if agent.run() == "closed" else 3)
