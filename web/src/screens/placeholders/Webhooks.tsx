import { Placeholder } from './Placeholder';

export function Webhooks() {
  return <Placeholder title="Webhooks" description="Incoming and outgoing webhooks, their deliveries and attempts." api="GET /api/webhooks" />;
}
