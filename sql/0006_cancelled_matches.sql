-- A queued match can be cancelled: one of its bots was disabled or
-- withdrawn, or its owner's account deleted, or whoever asked for it (a
-- challenge) or a host cancelled it. Its job is cancelled with it, unless a
-- runner already has it (then it is played to its end).
ALTER TABLE matches DROP CONSTRAINT matches_state_check;
ALTER TABLE matches ADD CONSTRAINT matches_state_check CHECK (state IN ('queued', 'finished', 'failed', 'cancelled'));

-- Who asked for a challenge (NULL: its ladder scheduled it).
ALTER TABLE matches ADD COLUMN requested_by bigint REFERENCES users(id);
