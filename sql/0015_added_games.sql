-- Games a host adds to a running server (an external game: a folder with a
-- manifest, `game.json`, a referee program and example bots, uploaded as an
-- archive; see docs/games/authoring.md). koth's own games keep their rows as
-- before: `kind` is their name and nothing below is set.
--
-- An added game's `kind` is 'external'; its checked files are kept as a tar
-- archive (`source`, the same form as a bot version's) with its manifest
-- beside them. It is 'validating' until a runner has played a match between
-- its example bots (a 'validate_game' job), then 'ready' (ladders may be
-- made for it) or 'refused' (`validation_log` says why, with the referee's
-- stderr).
ALTER TABLE games ADD COLUMN manifest jsonb;
ALTER TABLE games ADD COLUMN source bytea;
ALTER TABLE games ADD COLUMN source_hash text;
ALTER TABLE games ADD COLUMN status text NOT NULL DEFAULT 'ready'
    CHECK (status IN ('validating', 'ready', 'refused'));
ALTER TABLE games ADD COLUMN validation_log text;
ALTER TABLE games ADD COLUMN added_by bigint REFERENCES users(id);
ALTER TABLE games ADD COLUMN created_at timestamptz NOT NULL DEFAULT now();
ALTER TABLE games ADD CONSTRAINT games_external_has_its_files
    CHECK ((kind = 'external') = (manifest IS NOT NULL AND source IS NOT NULL AND source_hash IS NOT NULL));

ALTER TABLE jobs DROP CONSTRAINT jobs_kind_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_kind_check CHECK (kind IN ('compile', 'match', 'validate_game', 'noop'));
