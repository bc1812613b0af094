import { Placeholder } from './Placeholder';

export function AuditLog() {
  return <Placeholder title="Audit log" description="Every write in this account, with who made it." api="GET /api/account/audit" />;
}
