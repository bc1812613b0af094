import type { Fire, TimelineEntry, TriggerType } from './trigger-api';

/** What each type of trigger does, in a line (the type picker and the lists). */
export const TRIGGER_TYPE_LABELS: Record<TriggerType, { label: string; description: string }> = {
  cron: { label: 'Cron', description: 'Fires on a cron expression in a time zone' },
  schedule: { label: 'Schedule', description: 'Fires on a schedule (a cron expression or @every interval)' },
  webhook: { label: 'Webhook', description: 'Fires when its hook URL is called with its token' },
  event: { label: 'Event', description: 'Fires on an event of the account that matches its filter' },
  agent_finished: { label: 'Agent finished', description: 'Fires when a run ends (agent.completed or agent.failed) and matches its filter' },
  agent_output: { label: 'Agent output', description: "Fires when a run's output matches its filter" },
};

type Colour = string;

/** A fire's status as the history shows it: the run's when it started one. */
export const FIRE_STATUS: Record<Fire['status'], { label: string; color: Colour; why?: string }> = {
  fired: { label: 'fired', color: 'teal' },
  queued: { label: 'run queued', color: 'blue' },
  running: { label: 'run running', color: 'blue' },
  waiting: { label: 'run waiting for approval', color: 'orange' },
  succeeded: { label: 'run succeeded', color: 'teal' },
  failed: { label: 'run failed', color: 'red' },
  skipped: { label: 'skipped', color: 'gray', why: 'It did not go ahead: no run, not counted.' },
  throttled: { label: 'throttled', color: 'orange', why: "Over the account's limit of fires per minute: no run, not counted." },
};

/** Why a fire did not go ahead (the API's `reason`), as a person reads it. */
export const FIRE_REASONS: Record<NonNullable<Fire['reason']>, string> = {
  trigger_disabled: 'Skipped: the trigger was disabled when it fired.',
  agent_paused: 'Skipped: its agent is paused, so it does not run.',
  agent_template: 'Skipped: its agent is a template, which does not run.',
  filter_budget: "Skipped: the event's filters ran out of their work budget before this one was checked (the event may have matched).",
  model_tokens_per_day: "Skipped: the account has used its model tokens for today (MODEL_TOKENS_PER_DAY, UTC day).",
  fires_per_minute: "Throttled: over the account's limit of fires per minute (FIRES_PER_MINUTE).",
};

/** An expected fire time's outcome (GET …/timeline), with why there was no fire when there was none. */
export const EXPECTED_STATUS: Record<TimelineEntry['status'], { label: string; color: Colour; why: string }> = {
  fired: { label: 'fired', color: 'teal', why: 'A fire was recorded for this time.' },
  throttled: { label: 'throttled', color: 'orange', why: "Recorded over the account's limit of fires per minute: no run." },
  paused: { label: 'skipped: agent paused', color: 'gray', why: 'Recorded but skipped: its agent was paused or a template.' },
  disabled: { label: 'skipped: disabled', color: 'gray', why: 'The trigger was disabled at this time.' },
  'before-created': { label: 'before it existed', color: 'gray', why: 'Before the trigger was created.' },
  'overlap-skipped': { label: 'skipped: overlap', color: 'orange', why: 'The fire before was still running and the overlap policy starts nothing meanwhile.' },
  'catchup-skipped': { label: 'missed: catch-up window', color: 'orange', why: 'The schedule could not run until after this time\'s catch-up window had closed.' },
  pending: { label: 'pending', color: 'blue', why: 'No fire yet, but its catch-up window is still open: it may yet be made.' },
  missed: { label: 'missed', color: 'red', why: 'No fire was made for this time (it emitted trigger.missed).' },
};

export const RUN_STATUS_COLOR: Record<string, Colour> = { queued: 'blue', running: 'blue', succeeded: 'teal', failed: 'red' };
