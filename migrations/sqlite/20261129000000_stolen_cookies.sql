-- Stolen cookies. A session row keeps the remember-me record that recalled
-- it (remember_selector) and the passkey that signed it in (passkey_id), so
-- that voiding either ends its sessions. A remember-me record rotates on
-- every recall: replaced_hashes holds the SHA-256 of its replaced validators
-- (space-separated, oldest first), rotated_at when it last rotated, and
-- rotated_client / rotated_device the client (IPv4 address or IPv6 /64) and
-- device-cookie hash of the recall that rotated it, the only browser whose
-- parallel requests may still present the replaced validator for a moment.
-- failed_in_row counts second-factor failures with no success between;
-- at 100 the second step stays closed until a reset by mail. bits is the
-- strength of a recovery code's set: 80 for the sets issued before, 120 now.
ALTER TABLE sessions ADD COLUMN remember_selector VARCHAR(64) NULL;
ALTER TABLE sessions ADD COLUMN passkey_id BIGINT NULL;
CREATE INDEX sessions_remember_selector_index ON sessions (remember_selector);
ALTER TABLE gatehouse_remember ADD COLUMN replaced_hashes TEXT NULL;
ALTER TABLE gatehouse_remember ADD COLUMN rotated_at BIGINT NULL;
ALTER TABLE gatehouse_remember ADD COLUMN rotated_client VARCHAR(64) NULL;
ALTER TABLE gatehouse_remember ADD COLUMN rotated_device VARCHAR(64) NULL;
ALTER TABLE gatehouse_two_factor ADD COLUMN failed_in_row INTEGER NOT NULL DEFAULT 0;
ALTER TABLE gatehouse_recovery_codes ADD COLUMN bits SMALLINT NOT NULL DEFAULT 80;
