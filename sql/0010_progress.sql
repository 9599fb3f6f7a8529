-- What people watch while they wait: a running match's turns, and where a
-- new version stands.

-- A running match's progress, for its page: the turns played so far, as
-- the runner holding its job last wrote them (about once a second; fenced
-- by the job's lease, so a runner that lost the job writes nothing).
ALTER TABLE matches ADD COLUMN progress integer;
ALTER TABLE matches ADD COLUMN progress_at timestamptz;

-- A version's compile job, so that its page and `koth submit` can say
-- whether it waits for a runner or is being compiled.
ALTER TABLE bot_versions ADD COLUMN compile_job bigint REFERENCES jobs(id);
