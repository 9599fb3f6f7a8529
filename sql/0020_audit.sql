-- The audit trail a host reads (GET /api/audit, /audit, `koth audit`):
-- one row per match outcome, compile outcome, validation verdict,
-- automatic disable and host action, written in the transaction of what it
-- records, so a rolled-back action leaves none. The action names are
-- `AuditAction` in scheduler/src/audit.rs (scheduler/tests/ladder.rs
-- compares them with this CHECK).
--
-- The subjects are plain ids, not foreign keys: the trail outlives what it
-- names and never holds up a change to it. The actor's name is copied, so
-- an entry still reads after its account is deleted; `actor` is NULL when
-- koth did it (a runner, named in `actor_name`, or the scheduler).
CREATE TABLE audit (
    id          bigserial PRIMARY KEY,
    at          timestamptz NOT NULL DEFAULT now(),
    actor       bigint,
    actor_name  text NOT NULL,
    action      text NOT NULL CONSTRAINT audit_action_check CHECK (action IN (
                    'match_finished', 'match_failed', 'match_cancelled',
                    'compile_succeeded', 'compile_failed', 'version_accepted', 'version_refused',
                    'bot_auto_disabled', 'bot_disabled', 'bot_enabled', 'bot_deleted',
                    'ladder_created', 'ladder_paused', 'ladder_resumed', 'deadline_set', 'finals_started',
                    'game_added', 'game_ready', 'game_refused', 'account_deleted')),
    ladder_id   bigint,
    bot_id      bigint,
    version_id  bigint,
    match_id    bigint,
    game_id     bigint,
    why         text NOT NULL
);

-- The host reads newest first, by ladder, bot, match or kind.
CREATE INDEX audit_ladder ON audit (ladder_id, id) WHERE ladder_id IS NOT NULL;
CREATE INDEX audit_bot ON audit (bot_id, id) WHERE bot_id IS NOT NULL;
CREATE INDEX audit_match ON audit (match_id) WHERE match_id IS NOT NULL;
CREATE INDEX audit_action ON audit (action, id);
