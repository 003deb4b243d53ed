// Points per stage in the range, per group: the breakdown behind the success and completion figures.
from(bucket: v.bucket)
    |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
    |> filter(fn: (r) => r._measurement == "reach_task_events" and r._field == "task_id")
    |> filter(fn: (r) => v.capability == "*" or r.capability == v.capability)
    |> group(columns: [v.groupBy, "stage"])
    |> count()
    |> yield(name: "count")
