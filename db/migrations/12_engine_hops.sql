-- One hop per effect (README "Engine performance"): a trigger's nextFireAt is computed from its expression
-- (lib/cron.ts), which means what its Temporal Schedule's spec means, so Temporal is no longer asked for the
-- next action time after every fire and sync, and the column that kept its answer goes.
ALTER TABLE triggers DROP COLUMN next_fire_at;
