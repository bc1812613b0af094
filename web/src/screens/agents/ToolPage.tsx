import { Badge, Button, Code, Group, Paper, Stack, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { client, type Schemas } from '../../api/client';
import { unwrap } from '../../api/errors';
import { ApiErrorAlert } from '../../components/ApiErrorAlert';
import { JsonBlock } from '../../components/JsonBlock';
import { PageHeader } from '../../components/PageHeader';
import { EmptyState, Loading, QueryState } from '../../components/states';
import { useAccountId, useAccountKey } from '../../session/account';

type Tool = Schemas['Tool'];

const TYPE_LABELS: Record<string, string> = { mcp: 'MCP server' };

/**
 * A tool's page (/w/:accountId/agents/:agentId/tools/:toolId): what it is, and what it offers a model — a
 * list named `Functions` (GET /api/tools/:id/functions: an MCP server's functions as it lists them, or the
 * one function of the other types), each with its description and input schema. When an MCP server can't
 * be reached, the API's message says why (role alert).
 */
export function ToolPage() {
  const { agentId = '', toolId = '' } = useParams();
  const accountId = useAccountId();
  const tool = useQuery({
    queryKey: useAccountKey('tools', toolId),
    queryFn: async () => unwrap(await client.GET('/api/tools/{id}', { params: { path: { id: toolId } } })),
  });
  const agent = useQuery({
    queryKey: useAccountKey('agents', agentId),
    queryFn: async () => unwrap(await client.GET('/api/agents/{id}', { params: { path: { id: agentId } } })),
  });
  const agentName = agent.data?.name ?? 'The agent';
  return (
    <QueryState query={tool} loadingLabel="Loading the tool">
      {(data) => (
        <Stack>
          <PageHeader
            crumbs={[
              { label: 'All agents', to: `/w/${accountId}/agents` },
              { label: `${agentName}: tools`, to: `/w/${accountId}/agents/${agentId}/tools` },
            ]}
            title={
              <Group gap="sm">
                {data.name}
                <Badge variant="light" color="gray">
                  {TYPE_LABELS[data.type] ?? data.type}
                </Badge>
                {!data.enabled && (
                  <Badge variant="light" color="orange">
                    disabled
                  </Badge>
                )}
              </Group>
            }
            description={data.description || undefined}
          />
          <Paper withBorder p="md">
            <JsonBlock label="Configuration" value={data.configJson} />
          </Paper>
          <ToolFunctions tool={data} />
        </Stack>
      )}
    </QueryState>
  );
}

function ToolFunctions({ tool }: { tool: Tool }) {
  const functions = useQuery({
    // The tool's updatedAt in the key: an edit (another URL, other headers) asks again.
    queryKey: useAccountKey('tools', tool.id, 'functions', tool.updatedAt),
    queryFn: async () => unwrap(await client.GET('/api/tools/{id}/functions', { params: { path: { id: tool.id } } })),
    retry: false,
  });
  const fromServer = tool.type === 'mcp';
  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Title order={2} size="h4">
          Functions
        </Title>
        {fromServer && (
          <Button size="xs" variant="default" onClick={() => void functions.refetch()} loading={functions.isFetching}>
            Ask the server again
          </Button>
        )}
      </Group>
      <Text c="dimmed" size="sm">
        {fromServer
          ? "What the MCP server lists (within the tool's allow-list): a model run is offered each as <tool name>_<function name>."
          : 'The function a model run is offered for this tool.'}
      </Text>
      {functions.error ? (
        <ApiErrorAlert error={functions.error} title={fromServer ? "The MCP server's functions could not be listed" : undefined} />
      ) : functions.isPending ? (
        <Loading label={fromServer ? 'Asking the MCP server for its functions' : 'Loading the functions'} />
      ) : functions.data.length === 0 ? (
        <EmptyState title="No functions">The server lists none{fromServer ? ' that the allow-list lets through' : ''}.</EmptyState>
      ) : (
        <Stack component="ul" aria-label="Functions" gap="sm" p={0} m={0} style={{ listStyle: 'none' }}>
          {functions.data.map((f) => (
            <Paper component="li" key={f.name} withBorder p="md" aria-label={f.name}>
              <Stack gap={6}>
                <Code fw={600} style={{ alignSelf: 'flex-start' }}>
                  {f.name}
                </Code>
                {f.description && <Text size="sm">{f.description}</Text>}
                <JsonBlock label={`Input schema of ${f.name}`} value={f.inputSchema} maxHeight={200} />
              </Stack>
            </Paper>
          ))}
        </Stack>
      )}
    </Stack>
  );
}
