import { Client, Connection, makeGrpcRetryInterceptor, defaultGrpcRetryOptions, type ConnectionLike, type ConnectionOptions } from '@temporalio/client';
import { holdsConnection } from '../../db/pool';
import type { Config } from '../../lib/config';
import { tracingClientInterceptors } from '../../lib/tracing/temporal';

type GrpcInterceptor = NonNullable<ConnectionOptions['interceptors']>[number];

/** Thrown by a Temporal call made while the caller holds a pooled database connection. */
export class TemporalCallInsideConnectionError extends Error {}

/**
 * Refuses a Temporal call made while the caller holds a pooled database connection (a transaction's
 * callback, an open write unit): Temporal may not answer for seconds, and the connection would be kept
 * from every other request meanwhile (docs/architecture.md § Limits and fairness). A bug, never a user's
 * error: the call fails at once, so tests find every such place.
 */
export const refuseCallsHoldingConnection: GrpcInterceptor = (options, nextCall) => {
  if (holdsConnection()) {
    throw new TemporalCallInsideConnectionError(`Temporal call ${options.method_definition.path} made while a pooled database connection is held`);
  }
  // grpc-js takes the next call's interface as it is (the type asks for its class, not a dependency of ours).
  return nextCall(options) as unknown as ReturnType<GrpcInterceptor>;
};

/** Calls `fn` of a Temporal service unless the caller holds a pooled database connection (then throws, as above). */
function guardedService<S extends object>(service: S, name: string): S {
  return new Proxy(service, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (holdsConnection()) throw new TemporalCallInsideConnectionError(`Temporal call ${name}.${String(property)} made while a pooled database connection is held`);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/**
 * The worker's connection (a NativeConnection, which takes no gRPC interceptors) as its client sees it: every
 * call of its workflow and operator services refused while a pooled connection is held, as the API's client
 * refuses them (refuseCallsHoldingConnection). The Temporal workers poll over the connection itself, unguarded.
 */
export function refuseCallsHoldingConnectionOf<C extends ConnectionLike>(connection: C): ConnectionLike {
  const workflowService = guardedService(connection.workflowService, 'WorkflowService');
  const operatorService = guardedService(connection.operatorService, 'OperatorService');
  return new Proxy(connection, {
    get(target, property, receiver) {
      if (property === 'workflowService') return workflowService;
      if (property === 'operatorService') return operatorService;
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * The process's one Temporal client. The connection is lazy: the API starts and serves while
 * Temporal is down, and connects on first use. With tracing on, each workflow start joins the active trace.
 */
export function createTemporalClient(config: Config) {
  // Address, TLS, API key and gRPC metadata from the standard configuration (lib/temporal-settings.ts).
  const connection = Connection.lazy({
    ...config.temporal.connection,
    // The SDK's default retries, after the check that no connection is held.
    interceptors: [refuseCallsHoldingConnection, makeGrpcRetryInterceptor(defaultGrpcRetryOptions())],
  });
  const client = new Client({ connection, namespace: config.temporal.namespace, interceptors: tracingClientInterceptors() });
  return { connection, client, close: () => connection.close() };
}
export type TemporalClient = ReturnType<typeof createTemporalClient>;
