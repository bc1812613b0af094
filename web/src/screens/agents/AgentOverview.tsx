import { EmptyState } from '../../components/states';

export function AgentOverview() {
  return <EmptyState title="AgentOverview" />;
}
