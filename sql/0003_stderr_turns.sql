-- Which part of a seat's stderr each turn wrote: [[turn, end], ...] with
-- byte offsets into `stderr` (a turn's text starts where the previous
-- entry's ends), so a replay viewer shows a bot's stderr beside its move.
ALTER TABLE match_seats ADD COLUMN stderr_turns jsonb;
