-- The reference host's view of users as members of an organisation (the
-- first one they joined), which its OData sets expose. Only the columns a
-- directory may show: never the password hash or the remember token.
CREATE VIEW organisation_members AS
SELECT
    u.id,
    u.name,
    u.email,
    u.email_verified_at,
    u.created_at,
    u.updated_at,
    (SELECT MIN(ou.organisation_id) FROM organisation_user ou WHERE ou.user_id = u.id)
        AS organisation_id
FROM users u;
