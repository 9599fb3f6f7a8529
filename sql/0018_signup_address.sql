-- Sign-ups are limited per address and in all (`scheduler/src/quota.rs`):
-- the address an account was made from, kept for the hour the limit looks
-- back over and then forgotten (`db::accounts::sign_up` clears older ones),
-- so koth keeps no record of where its users connect from.
ALTER TABLE users ADD COLUMN signup_address inet;
CREATE INDEX users_recent_signups ON users (created_at) WHERE NOT is_host;
