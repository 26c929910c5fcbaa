-- Breached passwords: when a sign-in found the account's password in the
-- breached-password file. While it is set, every sign-in of the user is asked
-- to choose a new password before anything else; a new password clears it.
ALTER TABLE users ADD COLUMN password_breached_at TIMESTAMP(0) WITHOUT TIME ZONE NULL;
