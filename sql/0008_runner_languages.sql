-- What each runner can run: every language, with what (its image, or the
-- host's toolchain) or why not and the host's remedy. Runners write their
-- row when they start and every few minutes; the API offers the languages
-- that some runner reported it can run (scheduler/src/db/runners.rs), and
-- refuses uploads in the others at once instead of letting a compile fail
-- on a runner that has no toolchain for it.
CREATE TABLE runners (
    name      text PRIMARY KEY,
    -- {"python": {"ok": "image 1a2b3c4d5e6f"}, "go": {"err": "no go image is built and ..."}}
    languages jsonb NOT NULL,
    seen_at   timestamptz NOT NULL DEFAULT now()
);
