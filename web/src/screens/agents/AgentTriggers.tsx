import { EmptyState } from '../../components/states';

/** The agent's triggers: built on the Triggers screen's forms (placeholder until then). */
export function AgentTriggers() {
  return <EmptyState title="Triggers of this agent">Schedules, hooks and event triggers that start this agent will be listed and edited here.</EmptyState>;
}
