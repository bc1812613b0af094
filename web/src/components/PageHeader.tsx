import { Anchor, Breadcrumbs, Group, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { Link } from 'react-router';

/** A screen's title, where it sits (breadcrumbs, each a link), what it is for, and its actions. */
export function PageHeader({
  title,
  description,
  crumbs = [],
  actions,
}: {
  title: ReactNode;
  description?: ReactNode;
  crumbs?: Array<{ label: string; to: string }>;
  actions?: ReactNode;
}) {
  return (
    <Stack gap={4} mb="lg">
      {crumbs.length > 0 && (
        <Breadcrumbs aria-label="Breadcrumbs">
          {crumbs.map((crumb) => (
            <Anchor key={crumb.to} component={Link} to={crumb.to} size="sm">
              {crumb.label}
            </Anchor>
          ))}
        </Breadcrumbs>
      )}
      <Group justify="space-between" align="flex-start" wrap="wrap">
        <Title order={1} size="h2">
          {title}
        </Title>
        {actions && <Group gap="sm">{actions}</Group>}
      </Group>
      {description && (
        <Text c="dimmed" size="sm">
          {description}
        </Text>
      )}
    </Stack>
  );
}
