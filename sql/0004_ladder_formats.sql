-- Ladder formats are typed (scheduler/src/format.rs): a ladder's settings
-- hold the settings every format shares and its own format's, nothing
-- else, and unknown fields are refused. Earlier rows held every format's
-- fields with their defaults: keep each format's own.
UPDATE ladders SET settings = settings - 'rounds' - 'games_per_neighbour' - 'scoring' WHERE format = 'rated';
UPDATE ladders SET settings = settings - 'concurrency' - 'rating' - 'newcomer_games' - 'games_per_neighbour' WHERE format = 'round_robin';
UPDATE ladders SET settings = settings - 'rating' - 'newcomer_games' - 'rounds' - 'scoring' WHERE format = 'neighbours';

-- Swiss rounds (format.rs keeps this list equal to Format::NAMES; a test
-- compares them).
ALTER TABLE ladders DROP CONSTRAINT ladders_format_check;
ALTER TABLE ladders ADD CONSTRAINT ladders_format_check CHECK (format IN ('rated', 'round_robin', 'neighbours', 'swiss'));

-- The round a match belongs to, for formats played in rounds (Swiss).
ALTER TABLE matches ADD COLUMN round integer CHECK (round >= 1);
