-- Sign-in with OpenID providers: one row per provider account linked to a
-- user. issuer and subject (the ID token's iss and sub) name the provider's
-- account: it is linked to one user at most, and a user has one link per
-- provider (provider: the configuration's NAME). Times are Unix seconds.
CREATE TABLE gatehouse_oidc_links (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    provider VARCHAR(32) NOT NULL,
    issuer VARCHAR(255) NOT NULL,
    subject VARCHAR(255) NOT NULL,
    created_at BIGINT NOT NULL,
    last_used_at BIGINT NULL
);
CREATE UNIQUE INDEX gatehouse_oidc_links_account_unique ON gatehouse_oidc_links (issuer, subject);
CREATE UNIQUE INDEX gatehouse_oidc_links_user_provider_unique ON gatehouse_oidc_links (user_id, provider);
