import { Anchor, Badge, Table, Text } from '@mantine/core';
import { Link } from 'react-router';
import { DateTime } from '../../components/DateTime';
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
  return (
    <Table.ScrollContainer minWidth={800}>
      <Table highlightOnHover verticalSpacing="sm" aria-label="Triggers">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Name</Table.Th>
            <Table.Th>Type</Table.Th>
            {agentNames && <Table.Th>Agent</Table.Th>}
            <Table.Th>Fires when</Table.Th>
            <Table.Th>Next fire</Table.Th>
            <Table.Th>Fires</Table.Th>
            <Table.Th>Last fired</Table.Th>
            <Table.Th>State</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {triggers.map((trigger) => (
            <Table.Tr key={trigger.id}>
              <Table.Td>
                <Anchor component={Link} to={triggerUrl(accountId, trigger, scope)} fw={500}>
                  {trigger.name}
                </Anchor>
              </Table.Td>
              <Table.Td>{TRIGGER_TYPE_LABELS[trigger.type].label}</Table.Td>
              {agentNames && (
                <Table.Td>
                  {trigger.agentId ? (
                    <Anchor component={Link} to={`/w/${accountId}/agents/${trigger.agentId}/overview`} size="sm">
                      {agentNames.get(trigger.agentId) ?? 'Agent'}
                    </Anchor>
                  ) : (
                    <Text size="sm" c="dimmed">
                      none
                    </Text>
                  )}
                </Table.Td>
              )}
              <Table.Td>
                <Text size="sm" lineClamp={2}>
                  {triggerSummary(trigger)}
                </Text>
              </Table.Td>
              <Table.Td>
                <DateTime value={trigger.nextFireAt} relative />
              </Table.Td>
              <Table.Td>{trigger.fireCount.toLocaleString()}</Table.Td>
              <Table.Td>
                <DateTime value={trigger.lastFired} relative />
              </Table.Td>
              <Table.Td>
                <Badge variant="light" color={trigger.enabled ? 'teal' : 'gray'}>
                  {trigger.enabled ? 'enabled' : 'disabled'}
                </Badge>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
