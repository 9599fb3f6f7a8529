-- The account a job works for, where one account may queue many: a
-- version's compile and its validation game (the version's owner; none for
-- a host's). The claim lets one account run a bounded number of these at
-- once (`FairShare::compiles_per_account` in scheduler/src/db/queue.rs),
-- counted on this index of running jobs.
ALTER TABLE jobs ADD COLUMN account_id bigint;
CREATE INDEX jobs_running_account ON jobs (account_id) WHERE state = 'running' AND account_id IS NOT NULL;
