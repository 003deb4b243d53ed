// Failed attempts in the range per group and error_code (the worker's code; HANDLER_ERROR when it named none).
from(bucket: v.bucket)
    |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
    |> filter(fn: (r) => r._measurement == "reach_task_events" and r._field == "task_id" and r.stage == "failed")
    |> filter(fn: (r) => v.capability == "*" or r.capability == v.capability)
    |> group(columns: [v.groupBy, "error_code"])
    |> count()
    |> yield(name: "count")
