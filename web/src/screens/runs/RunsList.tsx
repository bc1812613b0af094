import { EmptyState } from '../../components/states';

export function RunsList() {
  return <EmptyState title="RunsList" />;
}
