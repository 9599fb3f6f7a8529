-- Replays stored packed (scheduler/src/packed.rs): the replay's JSON
-- compressed with zstd, written by the runner's result transaction as a
-- plain bytea instead of a jsonb document (a 32,768-turn Flit replay was a
-- 10 MB jsonb whose write took seconds). The viewer's frames, computed from
-- the replay when the match is first viewed, are kept beside it (gzip), so
-- they are computed once per match.
--
-- Both are compressed already: EXTERNAL stops PostgreSQL trying to
-- compress them again (it would spend the CPU and keep the original).
--
-- Replays recorded before this migration stay in matches.replay and are
-- served from there.
CREATE TABLE match_replays (
    match_id   bigint PRIMARY KEY REFERENCES matches(id) ON DELETE CASCADE,
    replay_zst bytea NOT NULL,
    json_bytes integer NOT NULL,
    frames_gz  bytea
);
ALTER TABLE match_replays ALTER COLUMN replay_zst SET STORAGE EXTERNAL;
ALTER TABLE match_replays ALTER COLUMN frames_gz SET STORAGE EXTERNAL;
