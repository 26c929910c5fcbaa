-- Two-factor sign-in: one row per user holding the TOTP secret sealed with
-- the application's secret_key. A row without confirmed_at is an enrolment
-- not confirmed yet (two-factor is still off). last_step is the last TOTP
-- time step accepted: a code of that step or an earlier one is refused.
-- DATETIME columns hold UTC.
CREATE TABLE gatehouse_two_factor (
    user_id BIGINT UNSIGNED NOT NULL PRIMARY KEY,
    secret TEXT NOT NULL,
    confirmed_at DATETIME NULL,
    last_step BIGINT NULL,
    created_at DATETIME NULL,
    updated_at DATETIME NULL,
    FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- Single-use recovery codes; code_hash is the SHA-256 (hex) of a code.
CREATE TABLE gatehouse_recovery_codes (
    id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    user_id BIGINT UNSIGNED NOT NULL,
    code_hash VARCHAR(64) NOT NULL,
    used_at DATETIME NULL,
    INDEX gatehouse_recovery_codes_user_id_index (user_id),
    FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
