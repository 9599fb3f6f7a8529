-- A validation game before a new version plays rated matches (Kaggle's
-- validation episode): a compiled version first plays a short unrated
-- match against copies of itself. One that crashes, never answers in time
-- or answers nothing valid is refused, with the reason and its stderr, and
-- the bot's previous version keeps playing; one that plays becomes the
-- bot's current version (scheduler/src/validation.rs).
ALTER TABLE bot_versions DROP CONSTRAINT bot_versions_status_check;
ALTER TABLE bot_versions ADD CONSTRAINT bot_versions_status_check
    CHECK (status IN ('pending', 'validating', 'ready', 'failed', 'refused'));

-- The version a validation game is for (NULL for every other match). Such
-- matches belong to the bot's ladder (its game and limits) but are not the
-- ladder's: no format counts them and no ladder page lists them.
ALTER TABLE matches ADD COLUMN validates bigint REFERENCES bot_versions(id);
CREATE INDEX matches_validates ON matches (validates) WHERE validates IS NOT NULL;

-- The version's validation game and what it showed: why it was refused
-- (with the seat's stderr), or that it passed.
ALTER TABLE bot_versions ADD COLUMN validation_match bigint REFERENCES matches(id);
ALTER TABLE bot_versions ADD COLUMN validation_log text;
