-- Passkeys (WebAuthn credentials): one row per credential, several per
-- user. credential_hash is the SHA-256 (hex) of the credential id, the key a
-- sign-in finds its passkey by; user_handle is the random id the
-- authenticator keeps for the user (one per user, never the users.id);
-- passkey is webauthn-rs' record of the public key and signature counter.
CREATE TABLE gatehouse_passkeys (
    id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    user_id BIGINT UNSIGNED NOT NULL,
    credential_hash VARCHAR(64) NOT NULL,
    user_handle VARCHAR(36) NOT NULL,
    name VARCHAR(64) NOT NULL,
    passkey TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    last_used_at BIGINT NULL,
    UNIQUE INDEX gatehouse_passkeys_credential_hash_unique (credential_hash),
    INDEX gatehouse_passkeys_user_id_index (user_id),
    FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- The browsers a user signed in on: device_hash is the SHA-256 (hex) of the
-- random id in the browser's gatehouse_device cookie. A sign-in from a
-- device not listed for the user is a new device (and a mail).
CREATE TABLE gatehouse_devices (
    device_hash VARCHAR(64) NOT NULL,
    user_id BIGINT UNSIGNED NOT NULL,
    first_seen_at BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL,
    PRIMARY KEY (device_hash, user_id),
    INDEX gatehouse_devices_user_id_index (user_id),
    FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
