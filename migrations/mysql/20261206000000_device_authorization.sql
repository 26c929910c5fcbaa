-- The device authorization grant (RFC 8628): a script asks for a device code
-- and a user code, a signed-in person allows or denies the user code on the
-- /device screen, and the script, polling, receives a personal access token
-- once. Both codes are kept only as their SHA-256 (the user code upper-cased
-- without its dash). state is pending, approved, denied or redeemed; a row
-- leaves state approved for redeemed once, by one conditional UPDATE.
-- abilities are those the token will have (as personal_access_tokens');
-- user_id and language are the approver's. Times are Unix seconds.
CREATE TABLE gatehouse_device_codes (
    device_code CHAR(64) PRIMARY KEY,
    user_code CHAR(64) NOT NULL UNIQUE,
    client_id VARCHAR(64) NOT NULL,
    abilities VARCHAR(4000) NOT NULL,
    state VARCHAR(16) NOT NULL,
    user_id BIGINT NULL,
    language VARCHAR(8) NULL,
    expires_at BIGINT NOT NULL,
    polled_at BIGINT NULL
);
CREATE INDEX gatehouse_device_codes_expires_index ON gatehouse_device_codes (expires_at);
