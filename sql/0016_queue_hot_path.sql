-- The queue's hot path, two changes.
--
-- Every fenced statement (complete, complete-and-claim, heartbeat, fail,
-- release) finds its job by `id = $1 AND lease = $2 AND state = 'running'`.
-- The planner took `jobs_running (lease_until)` for it, a partial index it
-- believes tiny (a few jobs run at a time), and scanned it whole with `id`
-- as a filter: every job finished since the last vacuum still has a dead
-- entry there, so a completion read more the more jobs had gone through
-- (in a run of 5,000 no-op jobs, complete-and-claim read 183 buffers a job
-- on average; 44 with this index, where the raw claim and completion that
-- `koth queue-bench` gives pgbench read 40). Keyed by id, the lookup is a
-- descent whatever the dead entries; rescue, the other reader, reads the
-- running jobs whole either way.
DROP INDEX jobs_running;
CREATE INDEX jobs_running ON jobs (id) WHERE state = 'running';

-- The trigger that wakes idle workers ran its function for every claim and
-- completion only to find that the job was not available: with the
-- condition here, the server does not call it (nor queue the event) then.
DROP TRIGGER jobs_notify ON jobs;
CREATE TRIGGER jobs_notify AFTER INSERT OR UPDATE OF state ON jobs
    FOR EACH ROW WHEN (NEW.state = 'available') EXECUTE FUNCTION jobs_notify();
