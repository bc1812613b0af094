import type { AccountRow, TransactionRow } from '../db/repositories/accounts';
import type { AgentRow } from '../db/repositories/agents';
import type { ApiKeyRow } from '../db/repositories/credentials';
import type { UserRow } from '../db/repositories/users';

/** Row → API shape. Pure functions; the only place snake_case turns into the public camelCase. */

const iso = (d: Date) => d.toISOString();

export function toUser(u: UserRow, balance: number) {
  return { id: u.id, email: u.email, name: u.name, balance, createdAt: iso(u.created_at) };
}

export function toApiKey(k: ApiKeyRow) {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    lastUsedAt: k.last_used_at ? iso(k.last_used_at) : null,
    createdAt: iso(k.created_at),
  };
}

export function toAccount(a: AccountRow) {
  return { id: a.id, name: a.name, balance: a.balance };
}

export function toTransaction(t: TransactionRow) {
  return {
    id: t.id,
    amount: t.amount,
    reason: t.reason,
    resourceId: t.resource_id,
    balanceAfter: t.balance_after,
    createdAt: iso(t.created_at),
  };
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
  };
}
