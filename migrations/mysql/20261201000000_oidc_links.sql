-- Sign-in with OpenID providers: one row per provider account linked to a
-- user. issuer and subject (the ID token's iss and sub) name the provider's
-- account: it is linked to one user at most, and a user has one link per
-- provider (provider: the configuration's NAME). Times are Unix seconds.
CREATE TABLE gatehouse_oidc_links (
    id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    user_id BIGINT UNSIGNED NOT NULL,
    provider VARCHAR(32) NOT NULL,
    issuer VARCHAR(255) NOT NULL,
    subject VARCHAR(255) NOT NULL,
    created_at BIGINT NOT NULL,
    last_used_at BIGINT NULL,
    UNIQUE INDEX gatehouse_oidc_links_account_unique (issuer, subject),
    UNIQUE INDEX gatehouse_oidc_links_user_provider_unique (user_id, provider),
    FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
