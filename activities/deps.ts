import type { Client } from '@temporalio/client';
import type { Db } from '../db/pool';
import type { Config } from '../lib/config';
import type { HandOff } from '../engine/outbox/handoff';
import type { SecretBox } from '../lib/secrets';

/** What activities are built from (samples-typescript's dependency-injection pattern). */
export interface ActivityDeps {
  db: Db;
  config: Config;
  secrets: SecretBox;
  /** Hands the outbox rows an activity committed to Temporal right away (the reconciler is the safety net). */
  handOff: HandOff;
  /** The worker process's one Temporal client. */
  client: Client;
}
