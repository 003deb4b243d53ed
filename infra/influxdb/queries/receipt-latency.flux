// Receipt latency (sent -> received, ms) per group: mean, p95 and sample count in the range.
// p95 uses quantile(method: "exact_selector"): the smallest value with at least 95 % of the values at or below it.
data =
    from(bucket: v.bucket)
        |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
        |> filter(fn: (r) => r._measurement == "reach_task_events" and r._field == "latency_ms" and r.stage == "received")
        |> filter(fn: (r) => v.capability == "*" or r.capability == v.capability)
        |> group(columns: [v.groupBy])

data |> mean() |> yield(name: "mean")
data |> quantile(q: 0.95, method: "exact_selector") |> yield(name: "p95")
data |> count() |> yield(name: "count")
