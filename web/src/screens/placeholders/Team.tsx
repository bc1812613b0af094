import { Placeholder } from './Placeholder';

export function Team() {
  return <Placeholder title="Team" description="Members of this account, their roles and permissions, and invitations." api="GET /api/team" />;
}
