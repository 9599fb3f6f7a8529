-- Complete-and-claim now claims the next job first and completes the
-- finished one second, in one statement (`scheduler/src/db/queue.rs`). When
-- the completion finds the lease lost, the statement calls this function,
-- which raises: the claim made in the same statement is undone with it, and
-- the worker is told (SQLSTATE KQ001) that its result is stale. Volatile (the
-- default), so the planner never evaluates it ahead of time.
CREATE FUNCTION koth_lease_lost(job bigint) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'job %: the lease was lost', job USING ERRCODE = 'KQ001';
END
$$;
