-- Sign-in looks users up by lower(email). MariaDB has no expression indexes
-- and MySQL's need 8.0.13; the unique index on email serves sign-in instead
-- (see `users::find_by_email`), so this migration only keeps the sets aligned.
SELECT 1;
