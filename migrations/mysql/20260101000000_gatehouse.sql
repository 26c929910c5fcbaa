-- Laravel's stock authentication tables, so Gatehouse can run over an existing
-- Laravel database, plus Gatehouse's own stores. DATETIME columns hold UTC.
CREATE TABLE IF NOT EXISTS users (
    id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    name VARCHAR(255) NOT NULL,
    email VARCHAR(255) NOT NULL UNIQUE,
    email_verified_at DATETIME NULL,
    password VARCHAR(255) NOT NULL,
    remember_token VARCHAR(100) NULL,
    created_at DATETIME NULL,
    updated_at DATETIME NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

CREATE TABLE IF NOT EXISTS password_reset_tokens (
    email VARCHAR(255) NOT NULL PRIMARY KEY,
    token VARCHAR(255) NOT NULL,
    created_at DATETIME NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- id holds the SHA-256 of the cookie value, never the value itself.
CREATE TABLE IF NOT EXISTS sessions (
    id VARCHAR(255) NOT NULL PRIMARY KEY,
    user_id BIGINT UNSIGNED NULL,
    ip_address VARCHAR(45) NULL,
    user_agent TEXT NULL,
    payload LONGTEXT NOT NULL,
    last_activity INT NOT NULL,
    INDEX sessions_user_id_index (user_id),
    INDEX sessions_last_activity_index (last_activity)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- Failure counters shared by every instance on this database.
CREATE TABLE gatehouse_throttle (
    throttle_key VARCHAR(128) NOT NULL PRIMARY KEY,
    hits INT NOT NULL,
    expires_at BIGINT NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

CREATE TABLE IF NOT EXISTS personal_access_tokens (
    id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    tokenable_type VARCHAR(255) NOT NULL,
    tokenable_id BIGINT UNSIGNED NOT NULL,
    name TEXT NOT NULL,
    token VARCHAR(64) NOT NULL UNIQUE,
    abilities TEXT NULL,
    last_used_at DATETIME NULL,
    expires_at DATETIME NULL,
    created_at DATETIME NULL,
    updated_at DATETIME NULL,
    INDEX personal_access_tokens_tokenable_index (tokenable_type, tokenable_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- The reference host's organisations and their members.
CREATE TABLE organisations (
    id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    name VARCHAR(255) NOT NULL,
    legal_form INT NOT NULL,
    company_size VARCHAR(32) NOT NULL,
    `function` VARCHAR(32) NOT NULL,
    billing_email VARCHAR(255) NULL,
    marketing_consent BOOLEAN NOT NULL DEFAULT FALSE,
    created_at DATETIME NULL,
    updated_at DATETIME NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

CREATE TABLE organisation_user (
    organisation_id BIGINT UNSIGNED NOT NULL,
    user_id BIGINT UNSIGNED NOT NULL,
    PRIMARY KEY (organisation_id, user_id),
    INDEX organisation_user_user_id_index (user_id),
    FOREIGN KEY (organisation_id) REFERENCES organisations (id) ON DELETE CASCADE,
    FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
