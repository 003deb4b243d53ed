"""What the e2e test (test/e2e/python-client.test.ts) checks of ReachClient against a running
stack with tests/work_agent.py serving `py-work`: each step's outcome, printed as one JSON object
for the test to assert on. Settings: REACH_ROUTER_URL (and REACH_KEY when auth is on)."""

import json
import sys
import time
import uuid

from agent_reach import ReachClient, ReachHttpError, SubmitFailedError, TaskFailedError

seen = {}
client = ReachClient(result_timeout_s=30, submit_retry_timeout_s=15, submit_max_attempts=100)

# The agent may not be routable yet: submit sends 503 NO_AGENT again with the same task_id.
seen["run"] = client.run("py-work", {"n": 3})

first = client.submit({"capability": "py-work", "payload": {"n": 4}, "task_id": f"same-{uuid.uuid4()}"})
again = client.submit({"capability": "py-work", "payload": {"n": 4}, "task_id": first["task_id"]})
seen["repeat"] = {"same_id": again["task_id"] == first["task_id"],
                  "result": client.result(first["task_id"])["result"]}

out = client.submit({"capability": "py-work", "payload": {"progress": [0.5], "chunks": ["a", "b"], "n": 5}})
events = list(client.events(out["task_id"]))
seen["events"] = [[e.event, e.data.get("stage") or e.data.get("chunk") or e.data.get("progress")] for e in events]
seen["events_final"] = events[-1].final

batch = client.submit_batch([{"capability": "py-work", "payload": {"n": i}} for i in range(3)])
seen["batch"] = {"statuses": [i["http_status"] for i in batch],
                 "results": [client.result(i["task_id"])["result"] for i in batch]}

seen["waited"] = client.submit({"capability": "py-work", "payload": {"n": 6}}, wait_s=20)

try:
    client.run("py-work", {"fail": "INVALID_PAYLOAD"})
except TaskFailedError as err:
    seen["failed"] = {"status": err.status, "error": err.error}

long = client.submit({"capability": "py-work", "payload": {"sleep_ms": 60000}})
deadline = time.monotonic() + 15
while time.monotonic() < deadline:
    if any(e["stage"] == "received" for e in client.get_task(long["task_id"])["timeline"]):
        break
    time.sleep(0.05)
seen["cancel"] = client.cancel(long["task_id"])
seen["cancelled_item"] = client.result(long["task_id"])["status"]

for name, call in (
    ("cancel_final", lambda: client.cancel(out["task_id"])),
    ("unknown_task", lambda: client.get_task("no-such-task")),
):
    try:
        call()
    except ReachHttpError as err:
        seen[name] = {"code": err.code, "status": err.status}

quick = ReachClient(submit_max_attempts=2, submit_retry_base_s=0.05, submit_retry_cap_s=0.1)
try:
    quick.submit({"capability": "py-nobody", "payload": None, "task_id": "nobody-1"})
except SubmitFailedError as err:
    seen["no_agent"] = {"task_id": err.task_id, "attempts": err.attempts, "code": err.code}

client.close()
json.dump(seen, sys.stdout)
print()
