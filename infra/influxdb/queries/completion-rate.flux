// Completion rate per group: completed points in the range, per second over the whole range.
import "date"

rangeSeconds = float(v: int(v: date.time(t: v.timeRangeStop)) - int(v: date.time(t: v.timeRangeStart))) / 1000000000.0

from(bucket: v.bucket)
    |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
    |> filter(fn: (r) => r._measurement == "reach_task_events" and r._field == "task_id" and r.stage == "completed")
    |> filter(fn: (r) => v.capability == "*" or r.capability == v.capability)
    |> group(columns: [v.groupBy])
    |> count()
    |> map(fn: (r) => ({r with completed: r._value, _value: float(v: r._value) / rangeSeconds}))
    |> yield(name: "per_second")
