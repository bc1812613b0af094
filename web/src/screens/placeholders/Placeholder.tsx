import { Anchor, Text } from '@mantine/core';
import { EmptyState } from '../../components/states';
import { PageHeader } from '../../components/PageHeader';

/** A screen still to be built: says what it will show and where the API already offers it. */
export function Placeholder({ title, description, api }: { title: string; description: string; api: string }) {
  return (
    <>
      <PageHeader title={title} description={description} />
      <EmptyState title={`${title} is coming to the console`}>
        <Text component="span">
          Until then, the API does it: <code>{api}</code> (<Anchor href="/api/docs">API documentation</Anchor>).
        </Text>
      </EmptyState>
    </>
  );
}
