"""The pull agent the e2e test (test/e2e/python-pull.test.ts) drives: capability `py-crunch` on
the pull channel, one slot, in region PULL_REGION with tags PULL_TAGS (comma-separated). Each
handler prints `started <n>` and holds its slot until the file GATE_DIR/<n> exists.
PULL_HEALTH=fail makes its health check say no; PULL_CARD_REGION registers it with an inline
AgentCard whose placement extension gives that region. Settings as work_agent.py's, plus the Redis
connection settings (REDIS_CLUSTER_NODES...)."""

import logging
import os
import sys
import time

from agent_reach import Agent, RedisConnection

gates = os.environ["GATE_DIR"]


def crunch(task):
    n = str(task.payload["n"])
    print(f"started {n}", flush=True)
    while not os.path.exists(os.path.join(gates, n)) and not task.cancelled.is_set():
        time.sleep(0.02)
    return {"n": n}


card_region = os.environ.get("PULL_CARD_REGION")
card = None if not card_region else {
    "name": "Python cruncher",
    "skills": [{"id": "py-crunch", "name": "Crunch"}],
    "capabilities": {"extensions": [{"uri": "urn:agent-reach:placement:v1", "params": {"region": card_region}}]},
}

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stdout)
agent = Agent(
    os.environ["REACH_REGISTRY_URL"],
    os.environ["REACH_AGENT_ID"],
    {"py-crunch": crunch},
    redis_connection=RedisConnection.from_env(),  # REDIS_URL, and REDIS_CLUSTER_NODES on a Cluster
    channel="pull",
    max_concurrency=1,
    region=os.environ.get("PULL_REGION") or None,
    tags=[t for t in os.environ.get("PULL_TAGS", "").split(",") if t],
    health=(lambda: os.environ.get("PULL_HEALTH") != "fail"),
    shutdown_timeout_s=5,
    card=card,
)
sys.exit(0 if agent.run() == "closed" else 3)
