-- Security activity: every sign-in, failure, lockout, sign-out, password
-- change, two-factor change, ended session and token change, kept for
-- `auth.security_events_days`. occurred_at holds UTC; no row holds a secret.
CREATE TABLE gatehouse_security_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    occurred_at DATETIME NOT NULL,
    event VARCHAR(32) NOT NULL,
    user_id BIGINT NULL,
    ip_address VARCHAR(45) NULL,
    user_agent TEXT NULL,
    detail TEXT NULL
);
CREATE INDEX gatehouse_security_events_user_index
    ON gatehouse_security_events (user_id, occurred_at);
CREATE INDEX gatehouse_security_events_occurred_at_index
    ON gatehouse_security_events (occurred_at);
