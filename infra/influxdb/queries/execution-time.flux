// Execution time (received -> completed, ms, server clock) per group: mean, p95 and count;
// plus the handler time the worker reported (duration_ms).
events =
    from(bucket: v.bucket)
        |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
        |> filter(fn: (r) => r._measurement == "reach_task_events" and r.stage == "completed")
        |> filter(fn: (r) => v.capability == "*" or r.capability == v.capability)
execution = events |> filter(fn: (r) => r._field == "latency_ms") |> group(columns: [v.groupBy])
handler = events |> filter(fn: (r) => r._field == "duration_ms") |> group(columns: [v.groupBy])

execution |> mean() |> yield(name: "mean")
execution |> quantile(q: 0.95, method: "exact_selector") |> yield(name: "p95")
execution |> count() |> yield(name: "count")
handler |> mean() |> yield(name: "handler_mean")
handler |> quantile(q: 0.95, method: "exact_selector") |> yield(name: "handler_p95")
