import type { ResourceContext } from '../context';
import type { App } from '../types';

export function webhookRoutes(_app: App, _ctx: ResourceContext): void {
  // TODO(issue 3): implemented by the webhooks work
}
