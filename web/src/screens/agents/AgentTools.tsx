import { EmptyState } from '../../components/states';

export function AgentTools() {
  return <EmptyState title="AgentTools" />;
}
