-- Invitations expire (INVITATION_TTL): each records when it stops being open, set from the TTL in force when
-- it was made, so a later change of the TTL does not move invitations already handed out. Accepting needs
-- expires_at in the future; an expired one no longer blocks inviting its address again (the invite withdraws
-- it first, in its own transaction). Null only on rows that were never an open invitation under this rule.
ALTER TABLE team_members ADD COLUMN expires_at timestamptz;

-- Invitations open now get the default TTL (7 days) from when they were made; those older than that are
-- expired at once, as they would have been under the rule.
UPDATE team_members SET expires_at = invited_at + interval '7 days' WHERE status = 'invited';
