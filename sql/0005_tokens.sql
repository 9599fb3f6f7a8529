-- Tokens an account can see and manage: each has an id and a name, when it
-- was last used (to the minute), and when it expires if the host set a
-- lifetime. Revoking deletes the row: the hash is the only copy.
ALTER TABLE api_tokens ADD COLUMN id bigserial UNIQUE;
ALTER TABLE api_tokens ADD COLUMN name text NOT NULL DEFAULT 'first' CHECK (name ~ '^[A-Za-z0-9_.-]{1,40}$');
ALTER TABLE api_tokens ADD COLUMN last_used_at timestamptz;
ALTER TABLE api_tokens ADD COLUMN expires_at timestamptz;

-- A deleted account keeps its row (its name stays taken and its matches
-- stay in history); its tokens are gone and its bots withdrawn.
ALTER TABLE users ADD COLUMN deleted_at timestamptz;
