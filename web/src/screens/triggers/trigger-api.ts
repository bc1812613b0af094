import { client, type Schemas } from '../../api/client';
import { unwrap } from '../../api/errors';
import { pageOf } from '../../components/cursor-list';

export type Trigger = Schemas['Trigger'];
export type TriggerType = Trigger['type'];
export type Fire = Schemas['Fire'];
export type FireDelivery = Schemas['FireDelivery'];
export type TimelineEntry = Schemas['TimelineEntry'];
export type PreviewTime = Schemas['PreviewTime'];
export type TriggerUpdate = Schemas['UpdateUserTrigger'];

/**
 * A trigger lives under one of two APIs (docs: docs/api.md § Triggers): an agent's (`/api/triggers/:id`) or the
 * account's standalone ones (`/api/user-triggers/:id`). Each route of the console knows which; these calls
 * take the scope and go to the matching path, typed by the generated client either way.
 */
export type TriggerScope = 'agent' | 'user';

const path = (id: string) => ({ params: { path: { id } } });

export const triggerApi = {
  async get(scope: TriggerScope, id: string): Promise<Trigger> {
    return unwrap(scope === 'agent' ? await client.GET('/api/triggers/{id}', path(id)) : await client.GET('/api/user-triggers/{id}', path(id)));
  },
  async update(scope: TriggerScope, id: string, body: TriggerUpdate): Promise<Trigger> {
    return unwrap(
      scope === 'agent'
        ? await client.PATCH('/api/triggers/{id}', { ...path(id), body: body as Schemas['UpdateTrigger'] })
        : await client.PATCH('/api/user-triggers/{id}', { ...path(id), body }),
    );
  },
  async remove(scope: TriggerScope, id: string): Promise<void> {
    unwrap(scope === 'agent' ? await client.DELETE('/api/triggers/{id}', path(id)) : await client.DELETE('/api/user-triggers/{id}', path(id)));
  },
  async fire(scope: TriggerScope, id: string, idempotencyKey: string) {
    const options = { ...path(id), body: {}, headers: { 'idempotency-key': idempotencyKey } };
    return unwrap(scope === 'agent' ? await client.POST('/api/triggers/{id}/fire', options) : await client.POST('/api/user-triggers/{id}/fire', options));
  },
  async fires(scope: TriggerScope, id: string, cursor: string | undefined) {
    const options = { params: { path: { id }, query: { cursor, limit: 25 } } };
    return pageOf(scope === 'agent' ? await client.GET('/api/triggers/{id}/fires', options) : await client.GET('/api/user-triggers/{id}/fires', options));
  },
  async fireDetail(scope: TriggerScope, id: string, fireId: string) {
    const options = { params: { path: { id, fireId } } };
    return unwrap(
      scope === 'agent' ? await client.GET('/api/triggers/{id}/fires/{fireId}', options) : await client.GET('/api/user-triggers/{id}/fires/{fireId}', options),
    );
  },
  async fireDeliveries(scope: TriggerScope, id: string, fireId: string): Promise<FireDelivery[]> {
    const options = { params: { path: { id, fireId } } };
    return unwrap(
      scope === 'agent'
        ? await client.GET('/api/triggers/{id}/fires/{fireId}/deliveries', options)
        : await client.GET('/api/user-triggers/{id}/fires/{fireId}/deliveries', options),
    );
  },
  async timeline(scope: TriggerScope, id: string, query: { from: string; limit: number; cursor?: string }) {
    const options = { params: { path: { id }, query } };
    return pageOf(scope === 'agent' ? await client.GET('/api/triggers/{id}/timeline', options) : await client.GET('/api/user-triggers/{id}/timeline', options));
  },
  async preview(scope: TriggerScope, id: string, n: number): Promise<PreviewTime[]> {
    const options = { params: { path: { id }, query: { n } } };
    return unwrap(scope === 'agent' ? await client.GET('/api/triggers/{id}/preview', options) : await client.GET('/api/user-triggers/{id}/preview', options));
  },
};

/** The console's URL of a trigger: an agent's under its agent, a standalone one under Triggers. */
export function triggerUrl(accountId: string, trigger: { id: string; agentId: string | null }, scope: TriggerScope): string {
  return scope === 'agent' && trigger.agentId ? `/w/${accountId}/agents/${trigger.agentId}/triggers/${trigger.id}` : `/w/${accountId}/triggers/${trigger.id}`;
}

export const isScheduled = (type: TriggerType) => type === 'cron' || type === 'schedule';
