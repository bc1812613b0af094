import type { AccountRow, ActingAccountRow, TransactionRow } from '../db/repositories/accounts';
import type { AgentRow } from '../db/repositories/agents';
import type { AuditRow } from '../db/repositories/audit';
import type { ApiKeyRow } from '../db/repositories/credentials';
import type { ConnectorRow } from '../db/repositories/connectors';
import type { DeliveryAttemptRow, DeliveryRow } from '../db/repositories/deliveries';
import type { RecoveryRow } from '../db/repositories/recoveries';
import type { FireDetailRow, FireListRow } from '../db/repositories/fires';
import type { RerunRow } from '../db/repositories/reruns';
import type { RunReplayRow } from '../db/repositories/run-replays';
import type { RunStepRow } from '../db/repositories/run-steps';
import type { RunRow } from '../db/repositories/runs';
import type { UsageDayRow } from '../db/repositories/usage';
import type { ThreadMessageRow } from '../db/repositories/thread-messages';
import type { InvitationRow, TeamMemberRow } from '../db/repositories/team';
import type { ToolRow } from '../db/repositories/tools';
import type { TriggerRow } from '../db/repositories/triggers';
import type { UserRow } from '../db/repositories/users';
import type { WebhookRow } from '../db/repositories/webhooks';
import type { Config } from '../lib/secret-config';
import type { z } from 'zod';
import type { accountSchema, actingAccountSchema, auditEntrySchema, transactionSchema, usageDaySchema } from './schemas/account';
import type { agentSchema } from './schemas/agents';
import type { apiKeySchema, userSchema } from './schemas/auth';
import type { connectorSchema } from './schemas/connectors';
import type { deliveryAttemptSchema, deliverySchema, recoverySchema } from './schemas/deliveries';
import type { fireDetailSchema, fireSchema } from './schemas/fires';
import type { replaySchema } from './schemas/reruns';
import type { runDetailSchema, runSchema, runStepSchema, threadMessageSchema } from './schemas/runs';
import type { invitationSchema, teamMemberSchema } from './schemas/team';
import type { toolSchema } from './schemas/tools';
import type { TriggerConfig, triggerSchema } from './schemas/triggers';
import type { webhookSchema } from './schemas/webhooks';
import { permissionsFor } from './services/access';
import { effectivePermissions } from './services/team-permissions';

/**
 * Row → API shape. Pure functions; the only place snake_case turns into the public camelCase. Each result
 * `satisfies` its response schema's input: the serializer parses it with that schema and silently drops a
 * field the schema does not declare, so an undeclared field, a missing one or a wrong type is a type error here.
 */
type Shape<Schema extends z.ZodType> = z.input<Schema>;

const iso = (d: Date) => d.toISOString();

export function toUser(u: UserRow, balance: number) {
  return { id: u.id, email: u.email, name: u.name, balance, createdAt: iso(u.created_at) } satisfies Shape<typeof userSchema>;
}

export function toApiKey(k: ApiKeyRow) {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    lastUsedAt: k.last_used_at ? iso(k.last_used_at) : null,
    createdAt: iso(k.created_at),
  } satisfies Shape<typeof apiKeySchema>;
}

export function toAccount(a: AccountRow) {
  return { id: a.id, name: a.name, balance: a.balance } satisfies Shape<typeof accountSchema>;
}

export function toTransaction(t: TransactionRow) {
  return {
    id: t.id,
    amount: t.amount,
    reason: t.reason,
    resourceId: t.resource_id,
    actorUserId: t.actor_user_id,
    balanceAfter: t.balance_after,
    createdAt: iso(t.created_at),
  } satisfies Shape<typeof transactionSchema>;
}

export function toAuditEntry(e: AuditRow) {
  return {
    id: e.id,
    actorUserId: e.actor_user_id,
    actorEmail: e.actor_email,
    action: e.action,
    resourceType: e.resource_type,
    resourceId: e.resource_id,
    createdAt: iso(e.created_at),
  } satisfies Shape<typeof auditEntrySchema>;
}

export function toActingAccount(a: ActingAccountRow) {
  return { id: a.id, name: a.name, role: a.role, permissions: permissionsFor(a.role, a.permissions) } satisfies Shape<typeof actingAccountSchema>;
}

export function toAgent(a: AgentRow) {
  return {
    id: a.id,
    accountId: a.account_id,
    name: a.name,
    description: a.description,
    goal: a.goal,
    persona: a.persona,
    voice: a.voice,
    systemPrompt: a.system_prompt,
    policies: a.policies,
    memoryConfig: a.memory_config,
    configJson: a.config_json,
    status: a.status,
    graph: a.graph,
    createdAt: iso(a.created_at),
    updatedAt: iso(a.updated_at),
  } satisfies Shape<typeof agentSchema>;
}

/** Row → API shape; `configJson` is the config to show (secrets masked, or revealed to the request that set them). */
export function toConnector(c: ConnectorRow, configJson: Config) {
  return {
    id: c.id,
    accountId: c.account_id,
    agentId: c.agent_id,
    type: c.type,
    name: c.name,
    configJson,
    enabled: c.enabled,
    createdAt: iso(c.created_at),
    updatedAt: iso(c.updated_at),
  } satisfies Shape<typeof connectorSchema>;
}

/** Row → API shape; `configJson` is the config to show (secrets masked, or revealed to the request that set them). */
export function toTool(t: ToolRow, configJson: Config) {
  return {
    id: t.id,
    accountId: t.account_id,
    agentId: t.agent_id,
    type: t.type,
    name: t.name,
    description: t.description,
    configJson,
    enabled: t.enabled,
    requiresApproval: t.requires_approval,
    createdAt: iso(t.created_at),
    updatedAt: iso(t.updated_at),
  } satisfies Shape<typeof toolSchema>;
}

/**
 * Row → API shape. `secret` is what the response shows: the plaintext when this request set it, else its
 * mask, or null. An incoming webhook stores no url; it shows the URL senders post to.
 */
export function toWebhook(w: WebhookRow, secret: string | null, publicBaseUrl: string) {
  return {
    id: w.id,
    accountId: w.account_id,
    name: w.name,
    url: w.direction === 'incoming' ? `${publicBaseUrl}/api/hooks/webhooks/${w.id}` : w.url!,
    secret,
    events: w.events,
    direction: w.direction,
    enabled: w.enabled,
    disabledReason: w.disabled_reason,
    triggerCount: w.trigger_count,
    lastTriggered: w.last_triggered_at ? iso(w.last_triggered_at) : null,
    createdAt: iso(w.created_at),
    updatedAt: iso(w.updated_at),
  } satisfies Shape<typeof webhookSchema>;
}
export type Webhook = ReturnType<typeof toWebhook>;

/** The API shape of a trigger (agent or user); `configJson` is the presented config (secrets masked or revealed). */
export function toTrigger(t: TriggerRow, derived: { configJson: Config; nextFireAt: Date | null; hookUrl: string | null }) {
  return {
    id: t.id,
    accountId: t.account_id,
    agentId: t.agent_id,
    type: t.type,
    name: t.name,
    configJson: derived.configJson as TriggerConfig,
    enabled: t.enabled,
    fireCount: t.fire_count,
    lastFired: t.last_fired_at ? iso(t.last_fired_at) : null,
    nextFireAt: derived.nextFireAt ? iso(derived.nextFireAt) : null,
    hookUrl: derived.hookUrl,
    createdAt: iso(t.created_at),
    updatedAt: iso(t.updated_at),
  } satisfies Shape<typeof triggerSchema>;
}
export type Trigger = ReturnType<typeof toTrigger>;

export function toTeamMember(m: TeamMemberRow) {
  return {
    id: m.id,
    accountId: m.account_id,
    email: m.email,
    role: m.role,
    permissions: effectivePermissions(m.role, m.permissions),
    customPermissions: m.permissions,
    status: m.status,
    userId: m.user_id,
    invitedAt: iso(m.invited_at),
    // An invitation's expiry: shown while it is one (invited, open or expired), not on a membership.
    expiresAt: m.status === 'invited' && m.expires_at ? iso(m.expires_at) : null,
    acceptedAt: m.accepted_at ? iso(m.accepted_at) : null,
    removedAt: m.removed_at ? iso(m.removed_at) : null,
    createdAt: iso(m.created_at),
    updatedAt: iso(m.updated_at),
  } satisfies Shape<typeof teamMemberSchema>;
}

export function toInvitation(i: InvitationRow) {
  return {
    id: i.id,
    accountId: i.account_id,
    accountName: i.account_name,
    email: i.email,
    role: i.role,
    permissions: effectivePermissions(i.role, i.permissions),
    invitedAt: iso(i.invited_at),
    expiresAt: iso(i.expires_at),
  } satisfies Shape<typeof invitationSchema>;
}

// ---- fires ----

/** A fire in a trigger's history; `status` is 'skipped', the status of the run it started, or 'fired'. */
export function toFire(f: FireListRow) {
  return {
    id: f.id,
    firedAt: iso(f.created_at),
    source: f.source,
    runId: f.run_id,
    status: f.state,
    reason: f.reason,
    scheduledAt: f.scheduled_at ? iso(f.scheduled_at) : null,
  } satisfies Shape<typeof fireSchema>;
}
export type Fire = ReturnType<typeof toFire>;

export function toFireDetail(f: FireDetailRow) {
  return { ...toFire(f), payload: f.payload ?? null } satisfies Shape<typeof fireDetailSchema>;
}

// ---- deliveries ----

/** A delivery as the log shows it; `attempts` counts every attempt, manual retries included. */
export function toDelivery(d: DeliveryRow) {
  return {
    id: d.id,
    eventId: d.event_id,
    eventType: d.event_type,
    status: d.status,
    attempts: d.attempts,
    lastStatusCode: d.last_status_code,
    lastError: d.last_error,
    nextAttemptAt: d.next_attempt_at ? iso(d.next_attempt_at) : null,
    createdAt: iso(d.created_at),
  } satisfies Shape<typeof deliverySchema>;
}
export type Delivery = ReturnType<typeof toDelivery>;

/** A recovery of a webhook's failed deliveries, with the outcomes so far of the attempts it started. */
export function toRecovery(r: RecoveryRow) {
  return {
    id: r.id,
    webhookId: r.webhook_id,
    since: iso(r.since),
    until: iso(r.until),
    status: r.status,
    total: r.total,
    attempted: r.attempted,
    succeeded: r.succeeded,
    failed: r.failed,
    createdAt: iso(r.created_at),
    completedAt: r.completed_at ? iso(r.completed_at) : null,
  } satisfies Shape<typeof recoverySchema>;
}
export type Recovery = ReturnType<typeof toRecovery>;

export function toDeliveryAttempt(a: DeliveryAttemptRow) {
  return {
    attempt: a.attempt,
    generation: a.generation,
    statusCode: a.status_code,
    error: a.error,
    durationMs: a.duration_ms,
    responseSnippet: a.response_snippet,
    createdAt: iso(a.created_at),
  } satisfies Shape<typeof deliveryAttemptSchema>;
}
export type DeliveryAttempt = ReturnType<typeof toDeliveryAttempt>;

// ---- usage ----

/** One UTC day of an account's use (GET /api/account/usage). */
export function toUsageDay(d: UsageDayRow) {
  return {
    date: d.date,
    runs: d.runs,
    promptTokens: Number(d.prompt_tokens),
    completionTokens: Number(d.completion_tokens),
    toolCalls: Number(d.tool_calls),
  } satisfies Shape<typeof usageDaySchema>;
}
export type UsageDay = ReturnType<typeof toUsageDay>;

// ---- runs ----

/** The API shape of an agent run. */
export function toRun(r: RunRow) {
  return {
    id: r.id,
    accountId: r.account_id,
    agentId: r.agent_id,
    triggerId: r.trigger_id,
    fireId: r.fire_id,
    status: r.status,
    input: r.input,
    output: r.output,
    error: r.error,
    chainDepth: r.chain_depth,
    threadId: r.thread_id,
    executor: r.executor,
    usage: { promptTokens: Number(r.prompt_tokens), completionTokens: Number(r.completion_tokens), toolCalls: r.tool_calls },
    rerunOf: r.rerun_of_run_id && r.rerun_from_step !== null ? { runId: r.rerun_of_run_id, fromStep: r.rerun_from_step } : null,
    startedAt: r.started_at ? iso(r.started_at) : null,
    finishedAt: r.finished_at ? iso(r.finished_at) : null,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  } satisfies Shape<typeof runSchema>;
}
export type Run = ReturnType<typeof toRun>;

/** The API shape of one step of a run. */
export function toRunStep(s: RunStepRow) {
  return {
    index: s.step_index,
    type: s.type,
    name: s.name,
    toolId: s.tool_id,
    copied: s.copied ?? false,
    approvalId: s.approval_id ?? null,
    input: s.input,
    output: s.output,
    error: s.error,
    usage: s.usage,
    startedAt: s.started_at ? iso(s.started_at) : null,
    finishedAt: s.finished_at ? iso(s.finished_at) : null,
  } satisfies Shape<typeof runStepSchema>;
}
export type RunStep = ReturnType<typeof toRunStep>;

/** The API shape of one message of a conversation thread. */
export function toThreadMessage(m: ThreadMessageRow) {
  return { id: m.id, agentId: m.agent_id, threadId: m.thread_id, runId: m.run_id, role: m.role, content: m.content, createdAt: iso(m.created_at) } satisfies Shape<typeof threadMessageSchema>;
}
export type ThreadMessage = ReturnType<typeof toThreadMessage>;

/** GET /api/runs/:id: the run with its latest reruns. */
export function toRunDetail(r: RunRow, reruns: RerunRow[]) {
  return {
    ...toRun(r),
    reruns: reruns.map((x) => ({ runId: x.id, fromStep: x.rerun_from_step, createdAt: iso(x.created_at) })),
  } satisfies Shape<typeof runDetailSchema>;
}
export type RunDetail = ReturnType<typeof toRunDetail>;

/** The API shape of a replay of an agent's failed runs. */
export function toReplay(r: RunReplayRow) {
  return { id: r.id, count: r.count, started: r.started, status: !r.finished_at ? 'running' : r.started >= r.count ? 'done' : 'failed', createdAt: iso(r.created_at) } satisfies Shape<typeof replaySchema>;
}
export type Replay = ReturnType<typeof toReplay>;
