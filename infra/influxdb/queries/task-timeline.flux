// One task's stages, for analysts (Data Explorer): set taskId; widen the range for older tasks.
// task_id is a field, not a tag, so this scans the whole range.
taskId = "put-the-task-id-here"

from(bucket: v.bucket)
    |> range(start: -30d)
    |> filter(fn: (r) => r._measurement == "reach_task_events")
    |> pivot(rowKey: ["_time", "stage", "capability", "agent_id"], columnKey: ["_field"], valueColumn: "_value")
    |> filter(fn: (r) => r.task_id == taskId)
    |> group()
    |> keep(columns: ["_time", "stage", "agent_id", "capability", "attempt", "latency_ms", "duration_ms", "reason", "parent_task_id"])
    |> sort(columns: ["_time"])
