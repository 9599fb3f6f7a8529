-- Contests (scheduler/src/contest.rs): any ladder with a deadline. After
-- it, submissions are refused; the host then starts the finals (the top N
-- of the standings, in a format that ends), whose matches are the ladder's
-- but counted apart (matches.finals); when the finals' format has nothing
-- left to play, their standings are frozen here and the ladder is done.
ALTER TABLE ladders ADD COLUMN deadline timestamptz;
-- The finals' plan (contest::FinalsPlan): top, format, settings, finalists.
ALTER TABLE ladders ADD COLUMN finals jsonb;
ALTER TABLE ladders ADD COLUMN finals_started_at timestamptz;
-- The frozen final standings (contest::FinalStandings).
ALTER TABLE ladders ADD COLUMN final_standings jsonb;
ALTER TABLE ladders ADD COLUMN finished_at timestamptz;

ALTER TABLE matches ADD COLUMN finals boolean NOT NULL DEFAULT false;
CREATE INDEX matches_finals ON matches (ladder_id) WHERE finals;
