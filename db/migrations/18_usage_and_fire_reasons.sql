-- Why a fire did not go ahead: null for a fire that did (fired, or a run's status), else one of
-- trigger_disabled, agent_paused, agent_template (skipped by its workflow), fires_per_minute (throttled),
-- filter_budget (an event fire whose filter was not evaluated within the event's work budget),
-- model_tokens_per_day (the linked agent's account had spent its model budget for the day).
-- Fires recorded before: throttled ones can only have been over FIRES_PER_MINUTE; a skipped one's reason
-- was not kept, so it stays null.
ALTER TABLE fires ADD COLUMN reason text;
UPDATE fires SET reason = 'fires_per_minute' WHERE status = 'throttled';

-- Each run's usage: tokens of its model calls and the tool calls it made, added to as each step is recorded
-- (in the statement that records it). Runs from before are counted from their steps.
ALTER TABLE runs
  ADD COLUMN prompt_tokens bigint NOT NULL DEFAULT 0,
  ADD COLUMN completion_tokens bigint NOT NULL DEFAULT 0,
  ADD COLUMN tool_calls integer NOT NULL DEFAULT 0;

UPDATE runs r SET prompt_tokens = s.prompt_tokens, completion_tokens = s.completion_tokens, tool_calls = s.tool_calls
FROM (
  SELECT run_id,
         coalesce(sum((usage ->> 'promptTokens')::bigint) FILTER (WHERE type = 'model' AND jsonb_typeof(usage -> 'promptTokens') = 'number'), 0) AS prompt_tokens,
         coalesce(sum((usage ->> 'completionTokens')::bigint) FILTER (WHERE type = 'model' AND jsonb_typeof(usage -> 'completionTokens') = 'number'), 0) AS completion_tokens,
         count(*) FILTER (WHERE type = 'tool' AND finished_at IS NOT NULL)::int AS tool_calls
    FROM run_steps GROUP BY run_id
) s
WHERE s.run_id = r.id;

-- An account's use per UTC day: the runs that began running that day, and the tokens and tool calls spent
-- that day. The model budget (MODEL_TOKENS_PER_DAY) reads today's row; every worker adds to it in the
-- statement that records a step, so the count is shared and exact. Runs from before count on the day they
-- started.
CREATE TABLE account_usage_days (
  account_id        uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  day               date NOT NULL,
  runs              integer NOT NULL DEFAULT 0,
  prompt_tokens     bigint NOT NULL DEFAULT 0,
  completion_tokens bigint NOT NULL DEFAULT 0,
  tool_calls        bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, day)
);

INSERT INTO account_usage_days (account_id, day, runs, prompt_tokens, completion_tokens, tool_calls)
SELECT account_id, (started_at AT TIME ZONE 'UTC')::date, count(*), sum(prompt_tokens), sum(completion_tokens), sum(tool_calls)
  FROM runs WHERE started_at IS NOT NULL
 GROUP BY account_id, (started_at AT TIME ZONE 'UTC')::date;
