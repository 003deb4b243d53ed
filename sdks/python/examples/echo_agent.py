"""An agent serving the capability `py-echo`: reports progress, streams the text back, returns the payload.

Run it against `npm start` (registry-sync on 8080, Redis on 6379):
    /usr/bin/python3 sdks/python/examples/echo_agent.py
Settings: REACH_REGISTRY_URL, REDIS_URL, REACH_AGENT_ID, REACH_API_KEY.
"""

import logging
import os
import sys

from agent_reach import Agent


def echo(task):
    task.progress(0.5)
    task.stream(str(task.payload))
    return task.payload


logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
agent = Agent(
    os.environ.get("REACH_REGISTRY_URL", "http://127.0.0.1:8080"),
    os.environ.get("REACH_AGENT_ID", "py-echo-1"),
    {"py-echo": echo},
    redis_url=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379"),
    api_key=os.environ.get("REACH_API_KEY"),
)
# Exit 0 after a drain (SIGINT/SIGTERM), 3 when a newer instance fenced this one off.
sys.exit(0 if agent.run() == "closed" else 3)
