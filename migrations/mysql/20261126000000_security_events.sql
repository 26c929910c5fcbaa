-- Security activity: every sign-in, failure, lockout, sign-out, password
-- change, two-factor change, ended session and token change, kept for
-- `auth.security_events_days`. occurred_at holds UTC; no row holds a secret.
CREATE TABLE gatehouse_security_events (
    id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    occurred_at DATETIME NOT NULL,
    event VARCHAR(32) NOT NULL,
    user_id BIGINT UNSIGNED NULL,
    ip_address VARCHAR(45) NULL,
    user_agent TEXT NULL,
    detail TEXT NULL,
    INDEX gatehouse_security_events_user_index (user_id, occurred_at),
    INDEX gatehouse_security_events_occurred_at_index (occurred_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
