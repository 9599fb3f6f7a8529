-- koth's schema. PostgreSQL is the single source of truth: bots and their
-- versions, the job queue, matches and their outcomes, ratings.

CREATE TABLE users (
    id          bigserial PRIMARY KEY,
    name        text NOT NULL UNIQUE CHECK (name ~ '^[A-Za-z0-9_.-]{1,40}$'),
    is_host     boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- API tokens, stored hashed (sha256 of the token); the token itself is shown once.
CREATE TABLE api_tokens (
    hash        bytea PRIMARY KEY,
    user_id     bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- A game koth can play (the rules live in the koth-games crate; `kind` names them).
CREATE TABLE games (
    id          bigserial PRIMARY KEY,
    name        text NOT NULL UNIQUE,
    kind        text NOT NULL,
    settings    jsonb NOT NULL DEFAULT '{}'
);

-- A ladder or tournament of one game.
--   format 'rated':       continuous ladder, Weng-Lin (or TrueSkill) ratings
--   format 'round_robin': every pairing / k-combination, scored by points or average score
--   format 'neighbours':  Linkage's ladder, 100 x won / played against adjacent bots
CREATE TABLE ladders (
    id          bigserial PRIMARY KEY,
    game_id     bigint NOT NULL REFERENCES games(id),
    name        text NOT NULL UNIQUE,
    format      text NOT NULL CHECK (format IN ('rated', 'round_robin', 'neighbours')),
    settings    jsonb NOT NULL DEFAULT '{}',
    paused      boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE bots (
    id              bigserial PRIMARY KEY,
    ladder_id       bigint NOT NULL REFERENCES ladders(id),
    owner_id        bigint NOT NULL REFERENCES users(id),
    name            text NOT NULL CHECK (name ~ '^[A-Za-z0-9_.-]{1,40}$'),
    -- The version that plays; a new ready version replaces the old one.
    current_version bigint,
    disabled_reason text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (ladder_id, name)
);

CREATE TABLE bot_versions (
    id           bigserial PRIMARY KEY,
    bot_id       bigint NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
    number       integer NOT NULL,
    language     text NOT NULL,
    main         text NOT NULL,
    -- The checked sources as a tar archive, and their hash.
    source       bytea NOT NULL,
    source_hash  text NOT NULL,
    status       text NOT NULL DEFAULT 'pending'
                 CHECK (status IN ('pending', 'ready', 'failed')),
    compile_log  text,
    -- The compiled files as a tar archive, and the image they were built in.
    artifact     bytea,
    image_id     text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (bot_id, number)
);

ALTER TABLE bots ADD FOREIGN KEY (current_version) REFERENCES bot_versions(id);

-- The job queue. A job is claimed by one statement (FOR UPDATE SKIP LOCKED),
-- held under a lease that the holder's heartbeat extends, and completed
-- only by the holder of the current lease (the fencing token `lease`).
CREATE SEQUENCE job_lease_seq;

CREATE TABLE jobs (
    id            bigserial PRIMARY KEY,
    kind          text NOT NULL CHECK (kind IN ('compile', 'match', 'noop')),
    state         text NOT NULL DEFAULT 'available'
                  CHECK (state IN ('available', 'running', 'completed', 'failed', 'cancelled')),
    priority      integer NOT NULL DEFAULT 0,
    payload       jsonb NOT NULL DEFAULT '{}',
    attempt       integer NOT NULL DEFAULT 0,
    max_attempts  integer NOT NULL DEFAULT 5 CHECK (max_attempts >= 1),
    run_after     timestamptz NOT NULL DEFAULT now(),
    lease         bigint,
    lease_until   timestamptz,
    holder        text,
    last_error    text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz
);

-- The hot path reads only these partial indexes: finished jobs are not in them.
CREATE INDEX jobs_available ON jobs (priority DESC, run_after, id) WHERE state = 'available';
CREATE INDEX jobs_running ON jobs (lease_until) WHERE state = 'running';

-- Wake idle workers when work appears.
CREATE FUNCTION jobs_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.state = 'available' THEN
        PERFORM pg_notify('koth_jobs', NEW.kind);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER jobs_notify AFTER INSERT OR UPDATE OF state ON jobs
    FOR EACH ROW EXECUTE FUNCTION jobs_notify();

CREATE TABLE matches (
    id           bigserial PRIMARY KEY,
    ladder_id    bigint REFERENCES ladders(id),
    job_id       bigint UNIQUE REFERENCES jobs(id),
    seed         bigint NOT NULL,
    rated        boolean NOT NULL DEFAULT true,
    state        text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'finished', 'failed')),
    engine       text,
    turns        integer,
    replay       jsonb,
    error        text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    finished_at  timestamptz
);

CREATE INDEX matches_ladder ON matches (ladder_id, id DESC);

CREATE TABLE match_seats (
    match_id     bigint NOT NULL REFERENCES matches(id) ON DELETE CASCADE,
    seat         integer NOT NULL,
    bot_id       bigint NOT NULL REFERENCES bots(id),
    version_id   bigint NOT NULL REFERENCES bot_versions(id),
    -- Filled in when the match finishes.
    score        double precision,
    rank         integer,
    result       text,
    status       jsonb,
    stderr       text,
    PRIMARY KEY (match_id, seat)
);

CREATE INDEX match_seats_bot ON match_seats (bot_id, match_id DESC);

CREATE TABLE ratings (
    ladder_id   bigint NOT NULL REFERENCES ladders(id),
    bot_id      bigint NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
    mu          double precision NOT NULL,
    sigma       double precision NOT NULL,
    games       integer NOT NULL DEFAULT 0,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (ladder_id, bot_id)
);

CREATE TABLE rating_history (
    id          bigserial PRIMARY KEY,
    ladder_id   bigint NOT NULL REFERENCES ladders(id),
    bot_id      bigint NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
    match_id    bigint NOT NULL REFERENCES matches(id),
    mu          double precision NOT NULL,
    sigma       double precision NOT NULL,
    at          timestamptz NOT NULL DEFAULT now(),
    UNIQUE (match_id, bot_id)
);
