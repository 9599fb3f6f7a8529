-- The claim's fair share counts the jobs started in a recent window
-- (challenges against ladder matches): a range of this index, however many
-- finished jobs the table holds.
CREATE INDEX jobs_started ON jobs (started_at) WHERE started_at IS NOT NULL;
