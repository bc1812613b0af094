import { Client, Connection } from '@temporalio/client';
import type { Config } from '../../lib/config';
import { tracingClientInterceptors } from '../../lib/tracing/temporal';

/**
 * The process's one Temporal client. The connection is lazy: the API starts and serves while
 * Temporal is down, and connects on first use. With tracing on, each workflow start joins the active trace.
 */
export function createTemporalClient(config: Config) {
  // Address, TLS, API key and gRPC metadata from the standard configuration (lib/temporal-settings.ts).
  const connection = Connection.lazy({ ...config.temporal.connection });
  const client = new Client({ connection, namespace: config.temporal.namespace, interceptors: tracingClientInterceptors() });
  return { connection, client, close: () => connection.close() };
}
export type TemporalClient = ReturnType<typeof createTemporalClient>;
