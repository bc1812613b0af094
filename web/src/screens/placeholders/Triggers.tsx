import { Placeholder } from './Placeholder';

export function Triggers() {
  return <Placeholder title="Triggers" description="Schedules, hooks and event triggers of the account, with their fires." api="GET /api/user-triggers" />;
}
