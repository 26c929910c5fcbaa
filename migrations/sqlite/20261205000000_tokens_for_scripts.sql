-- Access for scripts: a personal access token made from the account screen keeps
-- the first characters of the token (prefix), shown in its listing so that a
-- person can tell their tokens apart; the token itself is stored only as its
-- SHA-256, as before. A token's sets are its abilities (odata:read for every
-- set its owner may read, odata:read:<Set> for each set it was given).
-- last_used_ip is the client address of its latest use: a use from another
-- one is a token_used event.
ALTER TABLE personal_access_tokens ADD COLUMN prefix VARCHAR(16) NULL;
ALTER TABLE personal_access_tokens ADD COLUMN last_used_ip VARCHAR(64) NULL;
