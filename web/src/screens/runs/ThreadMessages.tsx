import { Badge, Group, Paper, Stack, Text, Title } from '@mantine/core';
import { client } from '../../api/client';
import { LoadMore, pageOf, useCursorList } from '../../components/cursor-list';
import { DateTime } from '../../components/DateTime';
import { QueryState } from '../../components/states';
import { useAccountKey } from '../../session/account';

/** The conversation a run belongs to: what the user said and what the agent answered, oldest first as the API pages it. */
export function ThreadMessages({ agentId, threadId, live }: { agentId: string; threadId: string; live: boolean }) {
  const list = useCursorList(
    useAccountKey('agents', agentId, 'threads', threadId),
    async (cursor) => pageOf(await client.GET('/api/agents/{id}/threads/{threadId}/messages', { params: { path: { id: agentId, threadId }, query: { cursor, limit: 50 } } })),
    { refetchInterval: live ? 3_000 : false },
  );
  return (
    <Paper withBorder p="md">
      <Title order={2} size="h4" mb="sm">
        Thread {threadId}
      </Title>
      <QueryState query={{ ...list, data: list.items }} loadingLabel="Loading the thread">
        {(messages) => (
          <Stack component="ul" aria-label="Thread messages" gap="xs" p={0} m={0} style={{ listStyle: 'none' }}>
            {messages.length === 0 && <Text c="dimmed">No messages yet.</Text>}
            {messages.map((m) => (
              <li key={m.id}>
                <Group gap="xs" align="baseline">
                  <Badge variant="light" color={m.role === 'user' ? 'gray' : 'violet'}>
                    {m.role}
                  </Badge>
                  <Text size="xs" c="dimmed">
                    <DateTime value={m.createdAt} />
                  </Text>
                </Group>
                <Text style={{ whiteSpace: 'pre-wrap' }}>{m.content}</Text>
              </li>
            ))}
          </Stack>
        )}
      </QueryState>
      <LoadMore list={list} label="Load more messages" />
    </Paper>
  );
}
