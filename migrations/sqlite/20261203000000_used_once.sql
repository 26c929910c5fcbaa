-- Values that may be used once (an OpenID flow's state): the SHA-256 of each
-- one used, kept until it could no longer be presented anyway. Claiming one
-- is a single INSERT, which the primary key lets succeed once, on every
-- instance and under any concurrency. Times are Unix seconds.
CREATE TABLE gatehouse_used_once (
    used_key CHAR(64) PRIMARY KEY,
    expires_at BIGINT NOT NULL
);
CREATE INDEX gatehouse_used_once_expires_index ON gatehouse_used_once (expires_at);
