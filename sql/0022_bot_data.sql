-- A bot version's data carried from match to match (a ladder's
-- `bot_data` setting, for games that offer it; see koth_runner::storage
-- and docs/scheduler.md, "Bot data").

-- Every snapshot a match started from or packed: a deterministic tar of the
-- bot's folder, named by its sha256. Kept (none is deleted yet), so that
-- `koth replay rerun` can start from any match's.
CREATE TABLE bot_data_snapshots (
    hash        text PRIMARY KEY CHECK (hash ~ '^sha256:[0-9a-f]{64}$'),
    archive     bytea NOT NULL,
    files       integer NOT NULL CHECK (files >= 0),
    bytes       bigint NOT NULL CHECK (bytes >= 0),
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- Each version's latest snapshot (none: it starts empty). Written only by
-- a compare-and-swap on the snapshot a match started from, in the
-- transaction that records the match.
CREATE TABLE bot_data (
    version_id  bigint PRIMARY KEY REFERENCES bot_versions(id) ON DELETE CASCADE,
    snapshot    text NOT NULL REFERENCES bot_data_snapshots(hash),
    writes      integer NOT NULL DEFAULT 1,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- What each seat's data was in a match: the snapshot it started from, the
-- one that became the version's latest (if any), and why none did.
ALTER TABLE match_seats ADD COLUMN data_from text REFERENCES bot_data_snapshots(hash);
ALTER TABLE match_seats ADD COLUMN data_written text REFERENCES bot_data_snapshots(hash);
ALTER TABLE match_seats ADD COLUMN data_note text;
