-- A running match's turns as the runner holding its job plays them, for
-- its page to draw live: one row a second or so, each the turns played
-- since the last (JSON, as the replay writes them). Written under the
-- job's lease, so a runner that lost the job writes nothing and the rows
-- of an earlier attempt are told apart (and dropped by the next one). Rows
-- of a match no longer being played are swept by the scheduler's tick.
CREATE TABLE match_live (
    match_id bigint NOT NULL REFERENCES matches(id) ON DELETE CASCADE,
    lease bigint NOT NULL,
    first_turn integer NOT NULL,
    turns bytea NOT NULL,
    PRIMARY KEY (match_id, lease, first_turn)
);
