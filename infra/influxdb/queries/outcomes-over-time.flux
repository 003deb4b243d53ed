// Delivery outcomes over time (chart): completed, failed and dead per window period, per stage.
from(bucket: v.bucket)
    |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
    |> filter(fn: (r) => r._measurement == "reach_task_events" and r._field == "task_id")
    |> filter(fn: (r) => r.stage == "completed" or r.stage == "failed" or r.stage == "dead")
    |> filter(fn: (r) => v.capability == "*" or r.capability == v.capability)
    |> group(columns: ["stage"])
    |> aggregateWindow(every: v.windowPeriod, fn: count, createEmpty: true)
    |> yield(name: "count")
