import { z } from 'zod';
import { timestamp } from './common';
import { permissionsSchema, TEAM_ROLES } from './team';

export const accountSchema = z.object({ id: z.uuid(), name: z.string(), balance: z.int().min(0).describe('Units; never below zero') }).meta({ id: 'Account' });

export const transactionSchema = z
  .object({
    id: z.uuid(),
    amount: z.int().describe('Positive for credits, negative for charges'),
    reason: z.string(),
    resourceId: z.uuid().nullable(),
    actorUserId: z.uuid().nullable().describe('The user whose request spent or credited it (in a team account, which member); null for the platform, e.g. the initial grant'),
    balanceAfter: z.int().min(0),
    createdAt: timestamp,
  })
  .meta({ id: 'Transaction' });

export const actingAccountSchema = z
  .object({
    id: z.uuid().describe('Send it as the Account-Id header to act in this account'),
    name: z.string(),
    role: z.enum(['owner', ...TEAM_ROLES]),
    permissions: permissionsSchema.describe('Effective permissions here: all true for the owner; for a member, the role defaults overridden by their custom ones'),
  })
  .meta({ id: 'ActingAccount' });

export const auditEntrySchema = z
  .object({
    id: z.uuid(),
    actorUserId: z.uuid().nullable().describe('Who made the change (null once that user no longer exists)'),
    actorEmail: z.string().nullable(),
    action: z.string().describe('<resource>.<verb>: agent.create, agent.update, agent.delete, agent.import, tool.create, trigger.fire, run.create, webhook.test, webhook.recover, delivery.retry, team.invite, team.update, team.remove, team.accept, …'),
    resourceType: z.string().describe('The part of action before the dot: agent, connector, tool, trigger, webhook, delivery, run, team'),
    resourceId: z.uuid().nullable().describe('The resource written (for team: the membership)'),
    createdAt: timestamp,
  })
  .meta({ id: 'AuditEntry' });

/**
 * A calendar date, YYYY-MM-DD, that exists (zod's ISO date: its pattern knows month lengths and leap years), documented
 * as `format: date` with that pattern, so a client (and the fuzzer) knows what a valid one is.
 */
const isoDate = z.iso.date({ error: 'must be a calendar date written YYYY-MM-DD' });

/** The most days one usage request covers. */
export const MAX_USAGE_DAYS = 366;

export const usageQuery = z.strictObject({
  from: isoDate.optional().describe('First day (UTC), inclusive; default 29 days before `to` (30 days in all)'),
  to: isoDate.optional().describe('Last day (UTC), inclusive; default today (UTC)'),
});

export const usageDaySchema = z
  .object({
    date: z.string().describe('The UTC day, YYYY-MM-DD'),
    runs: z.int().describe('Runs that began running that day'),
    promptTokens: z.int().describe('Prompt tokens of the model calls recorded that day'),
    completionTokens: z.int().describe('Completion tokens of the model calls recorded that day'),
    toolCalls: z.int().describe('Tool steps recorded that day'),
  })
  .meta({ id: 'UsageDay' });
