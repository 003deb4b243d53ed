"""An agent serving the capability `py-echo`: reports progress, streams the text back, returns the payload.

Run it against `npm start` (registry-sync on 8080, Redis on 6379):
    /usr/bin/python3 sdks/python/examples/echo_agent.py
Settings: REACH_REGISTRY_URL, REDIS_URL, REACH_AGENT_ID, REACH_KEY (docs/SETTINGS.md, Clients;
the earlier REGISTRY_URL, AGENT_ID and REACH_API_KEY still work, with a warning).
"""

import logging
import sys

from agent_reach import Agent, setting


def echo(task):
    task.progress(0.5)
    task.stream(str(task.payload))
    return task.payload


logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
agent = Agent(
    setting("registry_url"),
    setting("agent_id") or "py-echo-1",
    {"py-echo": echo},
    redis_url=setting("redis_url"),
)  # api_key: REACH_KEY, read by the Agent itself
# Exit 0 after a drain (SIGINT/SIGTERM), 3 when a newer instance fenced this one off.
sys.exit(0 if agent.run() == "closed" else 3)
