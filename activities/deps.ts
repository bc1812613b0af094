import type { Engine } from '../engine';

/**
 * What activities are built from (samples-typescript's dependency-injection pattern): the worker
 * process's engine, composed once (engine/compose.ts) — its pool, config, secrets, its one Temporal
 * client, the outbox hand-off (kicked after an activity commits; the reconciler is the safety net) and
 * the engine's parts. Activities are thin adapters over those parts.
 */
export type ActivityDeps = Engine;
