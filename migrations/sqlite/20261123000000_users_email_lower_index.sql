-- Sign-in looks users up by lower(email) (addresses are compared without
-- case, as a Laravel table may hold them as typed): index that expression.
CREATE INDEX IF NOT EXISTS users_email_lower_index ON users (lower(email));
