-- Remember-me per device: one row per remember cookie. The cookie holds the
-- selector and a 256-bit validator; only the validator's SHA-256 is stored.
-- session_id is sessions.id (the SHA-256 of the session cookie) of the
-- session the cookie last signed in, so ending that session voids it.
CREATE TABLE gatehouse_remember (
    selector VARCHAR(64) NOT NULL PRIMARY KEY,
    validator_hash VARCHAR(64) NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    session_id VARCHAR(255) NULL,
    created_at BIGINT NOT NULL,
    last_used_at BIGINT NOT NULL
);
CREATE INDEX gatehouse_remember_user_id_index ON gatehouse_remember (user_id);
CREATE INDEX gatehouse_remember_session_id_index ON gatehouse_remember (session_id);

-- The credential epoch of a user: raised by every change of password,
-- two-factor sign-in or sessions ended. A sign-in waiting for its second
-- factor carries the epoch it began in and is void once it moved on.
CREATE TABLE gatehouse_credential_epochs (
    user_id BIGINT NOT NULL PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    epoch BIGINT NOT NULL
);
