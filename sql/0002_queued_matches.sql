-- Queued (unfinished) matches are what every scheduler tick reads: how many
-- a ladder has in flight, a bot's matches in flight, matches whose job
-- failed. A partial index keeps those reads independent of the finished
-- matches, which a ladder accumulates for months.
CREATE INDEX matches_queued ON matches (ladder_id) WHERE state = 'queued';
