import { EmptyState } from '../../components/states';

export function AgentRuns() {
  return <EmptyState title="AgentRuns" />;
}
