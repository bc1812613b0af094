import { checkTargets, LookupsBusyError, TargetCheckError, type Target } from '../../lib/network';
import { TooManyRequestsError, ValidationError } from '../errors';

/** Seconds after which a refused lookup may start: the lookups in flight end within LOOKUP_TIMEOUT_MS. */
const BUSY_RETRY_AFTER_SECONDS = 3;

/**
 * The API's URL checks (docs/api.md § URL checks): a request's targets, checked with lib/network.ts's
 * bounded, thread-pool-free lookups in the share of the account it acts in. A refused target is a 400
 * naming its field; no free lookup slot a 429 with Retry-After.
 */
export function createTargetChecks(deps: { allowPrivateTargets: boolean; dnsServers: readonly string[] | null }) {
  return async function check(accountId: string, targets: readonly Target[]): Promise<void> {
    if (targets.length === 0) return;
    try {
      await checkTargets(targets, { allowPrivate: deps.allowPrivateTargets, servers: deps.dnsServers, accountId });
    } catch (err) {
      if (err instanceof TargetCheckError) throw new ValidationError(err.message);
      if (err instanceof LookupsBusyError) throw new TooManyRequestsError(err.message, BUSY_RETRY_AFTER_SECONDS);
      throw err;
    }
  };
}
export type TargetChecks = ReturnType<typeof createTargetChecks>;
