-- When a job's current attempt was claimed: the queue wait is started_at −
-- created_at, the run finished_at − started_at (the /metrics histograms).
ALTER TABLE jobs ADD COLUMN started_at timestamptz;
