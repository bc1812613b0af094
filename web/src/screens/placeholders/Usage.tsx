import { Placeholder } from './Placeholder';

export function Usage() {
  return <Placeholder title="Usage" description="Model tokens and runs per day, and the balance ledger." api="GET /api/account/transactions" />;
}
