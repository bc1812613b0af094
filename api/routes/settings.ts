import { settingsSchema, type Settings } from '../schemas/settings';
import type { App } from '../types';

/** What this deployment shows a client (the console): prices and where its workflows can be seen. */
export function settingsRoutes(app: App, deps: { settings: Settings }): void {
  app.get(
    '/api/settings',
    {
      config: { access: 'self' },
      schema: {
        tags: ['account'],
        summary: 'Deployment settings',
        description: 'Settings of this deployment a client shows: the price of an agent, and the Temporal UI (if any) to link workflows to.',
        response: { 200: settingsSchema },
      },
    },
    async () => deps.settings,
  );
}
