import { EmptyState } from '../../components/states';

export function AgentConnectors() {
  return <EmptyState title="AgentConnectors" />;
}
