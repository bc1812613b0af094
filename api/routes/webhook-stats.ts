import { errorResponse, idParams } from '../schemas/common';
import { webhookStatsSchema, webhookStatsSeriesQuery, webhookStatsSeriesSchema } from '../schemas/webhook-stats';
import type { WebhookStatsService } from '../services/webhook-stats-service';
import { callerOf, type App } from '../types';

/** An outgoing webhook's health (docs/api.md § Webhooks). */
export function webhookStatsRoutes(app: App, deps: { webhookStats: WebhookStatsService }): void {
  app.get(
    '/api/webhooks/:id/stats',
    {
      config: { access: 'read' },
      schema: {
        tags: ['webhooks'],
        summary: 'An endpoint\'s health',
        description:
          'How an outgoing webhook\'s endpoint is doing: its deliveries by status and its attempts by outcome, with the p50/p99 ' +
          'attempt latency, over the last 24 hours and the last 7 days; the deliveries pending now; its last success and last failure. ' +
          'An endpoint whose lastSuccess is older than its lastFailure is failing since then.',
        params: idParams,
        response: { 200: webhookStatsSchema, 409: errorResponse('The webhook is incoming: it receives requests and makes no deliveries.') },
      },
    },
    async (request) => deps.webhookStats.stats(callerOf(request), request.params.id),
  );

  app.get(
    '/api/webhooks/:id/stats/series',
    {
      config: { access: 'read' },
      schema: {
        tags: ['webhooks'],
        summary: 'An endpoint\'s health over time',
        description:
          'An outgoing webhook\'s attempts over the last hour, day or week, bucket by bucket: successes, failures, the success rate ' +
          'and the p50/p99 attempt latency of each (for a chart). Every bucket of the window is listed, empty ones too.',
        params: idParams,
        querystring: webhookStatsSeriesQuery,
        response: { 200: webhookStatsSeriesSchema, 409: errorResponse('The webhook is incoming: it receives requests and makes no deliveries.') },
      },
    },
    async (request) => deps.webhookStats.series(callerOf(request), request.params.id, request.query.window),
  );
}
