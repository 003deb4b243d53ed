// Execution time over time (chart): mean and p95 per window period, per group.
data =
    from(bucket: v.bucket)
        |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
        |> filter(fn: (r) => r._measurement == "reach_task_events" and r._field == "latency_ms" and r.stage == "completed")
        |> filter(fn: (r) => v.capability == "*" or r.capability == v.capability)
        |> group(columns: [v.groupBy])

data |> aggregateWindow(every: v.windowPeriod, fn: mean, createEmpty: false) |> yield(name: "mean")
data
    |> aggregateWindow(
        every: v.windowPeriod,
        fn: (column, tables=<-) => tables |> quantile(q: 0.95, method: "exact_selector", column: column),
        createEmpty: false,
    )
    |> yield(name: "p95")
