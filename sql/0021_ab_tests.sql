-- "Is version #N better than #M?" asked of the server (docs/ab.md): an
-- A/B test between two compiled versions of one bot, played as pairs of
-- unrated matches on one seed with the seats swapped, until the sequential
-- test of ladder/src/sprt.rs decides or the pairs allowed are played
-- (scheduler/src/db/ab.rs). The test's tally is kept here, beside the
-- versions: pairs per pair score (the pentanomial counts for two seats),
-- the statistic, and the verdict once there is one.
CREATE TABLE ab_tests (
    id           bigserial PRIMARY KEY,
    bot_id       bigint NOT NULL REFERENCES bots(id),
    new_version  bigint NOT NULL REFERENCES bot_versions(id),
    old_version  bigint NOT NULL REFERENCES bot_versions(id),
    -- Who asked (the bot's owner): the pairs are charged to this account.
    account_id   bigint NOT NULL REFERENCES users(id),
    seats        integer NOT NULL CHECK (seats >= 2),
    elo0         double precision NOT NULL,
    elo1         double precision NOT NULL,
    alpha        double precision NOT NULL,
    beta         double precision NOT NULL,
    max_pairs    integer NOT NULL CHECK (max_pairs >= 1),
    -- The seed of pair k is seed + k.
    seed         bigint NOT NULL,
    state        text NOT NULL DEFAULT 'running'
                 CONSTRAINT ab_tests_state_check CHECK (state IN ('running', 'better', 'not_better', 'undecided', 'stopped')),
    -- Pairs per pair score, k half points of 4 x (NEW seat, OLD seat) comparisons a game.
    counts       bigint[] NOT NULL,
    llr          double precision NOT NULL DEFAULT 0,
    -- Why a test stopped without a verdict.
    error        text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    finished_at  timestamptz,
    CHECK (new_version <> old_version)
);
CREATE INDEX ab_tests_bot ON ab_tests (bot_id, id DESC);
CREATE INDEX ab_tests_running ON ab_tests (id) WHERE state = 'running';

-- An A/B test's matches: unrated, asked for by the test's account (so no
-- ladder format counts them, as for challenges), with the test and the
-- pair they belong to.
ALTER TABLE matches ADD COLUMN ab_test bigint REFERENCES ab_tests(id);
ALTER TABLE matches ADD COLUMN ab_pair integer;
CREATE INDEX matches_ab_test ON matches (ab_test, ab_pair) WHERE ab_test IS NOT NULL;
