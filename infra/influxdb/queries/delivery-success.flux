// Delivery success rate per group: completed / (completed + failed + dead) points in the range.
from(bucket: v.bucket)
    |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
    |> filter(fn: (r) => r._measurement == "reach_task_events" and r._field == "task_id")
    |> filter(fn: (r) => r.stage == "completed" or r.stage == "failed" or r.stage == "dead")
    |> filter(fn: (r) => v.capability == "*" or r.capability == v.capability)
    |> group(columns: [v.groupBy, "stage"])
    |> count()
    |> group(columns: [v.groupBy])
    |> pivot(rowKey: [v.groupBy], columnKey: ["stage"], valueColumn: "_value")
    |> map(
        fn: (r) => {
            completed = float(v: if exists r.completed then r.completed else 0)
            failed = float(v: if exists r.failed then r.failed else 0)
            dead = float(v: if exists r.dead then r.dead else 0)
            outcomes = completed + failed + dead

            return {r with _value: if outcomes > 0.0 then completed / outcomes else 0.0, outcomes: int(v: outcomes)}
        },
    )
    |> yield(name: "success_rate")
