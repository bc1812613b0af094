import type { Config } from '../lib/config';
import type { HandOff } from '../lib/handoff';
import type { SecretBox } from '../lib/secrets';
import type { Db } from '../db/pool';
import type { AgentsRepository } from '../db/repositories/agents';

/** What a resource module needs to build its repository and service; made once per app in buildApp. */
export interface ResourceContext {
  db: Db;
  config: Config;
  secrets: SecretBox;
  agents: AgentsRepository;
  publicBaseUrl: string;
  /** Call `kick()` after committing outbox rows (events, runs, fires, schedule syncs). */
  handOff: HandOff;
}
