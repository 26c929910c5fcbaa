-- Device-bound sessions (DBSC). A session a browser bound to a key of its
-- own keeps the DBSC session identifier it was given (dbsc_id, random, not
-- a credential: every refresh is proven by the key), the public key as a
-- JSON Web Key (dbsc_key) and its RFC 7638 SHA-256 thumbprint
-- (dbsc_thumbprint). A remember-me record issued in, or recalling, a bound
-- session carries the same three: it recalls only through a refresh proven
-- by that key.
ALTER TABLE sessions ADD COLUMN dbsc_id VARCHAR(64) NULL;
ALTER TABLE sessions ADD COLUMN dbsc_key TEXT NULL;
ALTER TABLE sessions ADD COLUMN dbsc_thumbprint VARCHAR(64) NULL;
CREATE INDEX sessions_dbsc_id_index ON sessions (dbsc_id);
ALTER TABLE gatehouse_remember ADD COLUMN dbsc_id VARCHAR(64) NULL;
ALTER TABLE gatehouse_remember ADD COLUMN dbsc_key TEXT NULL;
ALTER TABLE gatehouse_remember ADD COLUMN dbsc_thumbprint VARCHAR(64) NULL;
