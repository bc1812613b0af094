import { Anchor, Text } from '@mantine/core';
import { Link } from 'react-router';
import { DateTime } from '../../components/DateTime';
import { EnabledBadge } from '../../components/EnabledBadge';
import { ResourceTable, type Column } from '../../components/ResourceTable';
import { cronInWords } from '../../lib/cron-words';
import { useAccountId } from '../../session/account';
import { isScheduled, triggerUrl, type Trigger, type TriggerScope } from './trigger-api';
import { TRIGGER_TYPE_LABELS } from './trigger-labels';

/** What starts a trigger, in a few words: its schedule, its hook, or the event it listens for. */
export function triggerSummary(trigger: Trigger): string {
  if (isScheduled(trigger.type)) {
    const c = trigger.configJson as { cronExpression: string; timezone: string };
    return `${cronInWords(c.cronExpression) ?? c.cronExpression} (${c.timezone})`;
  }
  if (trigger.type === 'webhook') return 'When its hook URL is called';
  const c = trigger.configJson as { eventType: string; eventFilter: Record<string, unknown> };
  const conditions = Object.keys(c.eventFilter ?? {}).length;
  return `On ${c.eventType}${conditions ? `, ${conditions} condition${conditions === 1 ? '' : 's'}` : ''}`;
}

/** A page of triggers: each a link to its page, what starts it, its next and last fire, and whether it is on. */
export function TriggerTable({ triggers, scope, agentNames }: { triggers: Trigger[]; scope: TriggerScope; agentNames?: Map<string, string> }) {
  const accountId = useAccountId();
  const agent: Column<Trigger> = {
    header: 'Agent',
    cell: (trigger) =>
      trigger.agentId ? (
        <Anchor component={Link} to={`/w/${accountId}/agents/${trigger.agentId}/overview`} size="sm">
          {agentNames?.get(trigger.agentId) ?? 'Agent'}
        </Anchor>
      ) : (
        <Text size="sm" c="dimmed">
          none
        </Text>
      ),
  };
  const columns: Column<Trigger>[] = [
    { header: 'Type', cell: (trigger) => TRIGGER_TYPE_LABELS[trigger.type].label },
    ...(agentNames ? [agent] : []),
    {
      header: 'Fires when',
      cell: (trigger) => (
        <Text size="sm" lineClamp={2}>
          {triggerSummary(trigger)}
        </Text>
      ),
    },
    { header: 'Next fire', cell: (trigger) => <DateTime value={trigger.nextFireAt} relative /> },
    { header: 'Fires', cell: (trigger) => trigger.fireCount.toLocaleString() },
    { header: 'Last fired', cell: (trigger) => <DateTime value={trigger.lastFired} relative /> },
    { header: 'State', cell: (trigger) => <EnabledBadge enabled={trigger.enabled} /> },
  ];
  return <ResourceTable label="Triggers" rows={triggers} href={(trigger) => triggerUrl(accountId, trigger, scope)} columns={columns} />;
}
