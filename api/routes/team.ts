import type { ResourceContext } from '../context';
import type { App } from '../types';

export function teamRoutes(_app: App, _ctx: ResourceContext): void {
  // TODO(issue 3): implemented by the team work
}
