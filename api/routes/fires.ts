import type { ResourceContext } from '../context';
import type { App } from '../types';

/** TODO(issue 4): filled in by its owner. */
export function fireRoutes(_app: App, _ctx: ResourceContext): void {}
