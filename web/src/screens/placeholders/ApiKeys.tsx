import { Placeholder } from './Placeholder';

export function ApiKeys() {
  return <Placeholder title="API keys" description="Long-lived keys for scripts; each is shown once." api="GET /api/auth/api-keys" />;
}
