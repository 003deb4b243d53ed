// Completion rate over time (chart): completions per minute in each window period, per group.
from(bucket: v.bucket)
    |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
    |> filter(fn: (r) => r._measurement == "reach_task_events" and r._field == "task_id" and r.stage == "completed")
    |> filter(fn: (r) => v.capability == "*" or r.capability == v.capability)
    |> group(columns: [v.groupBy])
    |> aggregateWindow(every: v.windowPeriod, fn: count, createEmpty: true)
    |> map(fn: (r) => ({r with _value: float(v: r._value) * 60000000000.0 / float(v: int(v: v.windowPeriod))}))
    |> yield(name: "per_minute")
