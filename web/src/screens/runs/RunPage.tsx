import { EmptyState } from '../../components/states';

export function RunPage() {
  return <EmptyState title="RunPage" />;
}
