-- Two-factor sign-in: one row per user holding the TOTP secret sealed with
-- the application's secret_key. A row without confirmed_at is an enrolment
-- not confirmed yet (two-factor is still off). last_step is the last TOTP
-- time step accepted: a code of that step or an earlier one is refused.
CREATE TABLE gatehouse_two_factor (
    user_id BIGINT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    secret TEXT NOT NULL,
    confirmed_at TIMESTAMP(0) WITHOUT TIME ZONE NULL,
    last_step BIGINT NULL,
    created_at TIMESTAMP(0) WITHOUT TIME ZONE NULL,
    updated_at TIMESTAMP(0) WITHOUT TIME ZONE NULL
);

-- Single-use recovery codes; code_hash is the SHA-256 (hex) of a code.
CREATE TABLE gatehouse_recovery_codes (
    id BIGSERIAL PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash VARCHAR(64) NOT NULL,
    used_at TIMESTAMP(0) WITHOUT TIME ZONE NULL
);
CREATE INDEX gatehouse_recovery_codes_user_id_index ON gatehouse_recovery_codes (user_id);
