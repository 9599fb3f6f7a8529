-- How often a job was played on a machine too busy to time it (a match
-- ended as the machine's fault, no bot at fault). Such a try is given back
-- without spending one of the job's attempts, up to a bound
-- (`MAX_OVERLOADS` in scheduler/src/db/queue.rs): a host that runs more
-- runners than it has cores must not fail matches and refuse new versions
-- because of it.
ALTER TABLE jobs ADD COLUMN overloads integer NOT NULL DEFAULT 0 CHECK (overloads >= 0);
