import { ActionIcon, AppShell, Badge, Popover, Stack, Burger, Button, Container, Group, NativeSelect, NavLink as MantineNavLink, ScrollArea, Text, Title, Tooltip, VisuallyHidden } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { Suspense, useId } from 'react';
import { Link, NavLink, Outlet, useLocation, useNavigate, useNavigation, useParams } from 'react-router';
import { setActingAccount } from '../api/client';
import { ApiErrorAlert } from '../components/ApiErrorAlert';
import { Loading } from '../components/states';
import { usePendingApprovalCount } from '../screens/approvals/approval-api';
import { useAccounts, useAccountSummary } from '../session/account';
import { allows, type Right } from '../session/permissions';
import { signOut } from '../session/session';

/** The navigation, in the order a person works: build agents, automate them, watch what ran, run the team. */
const SECTIONS: Array<{ label: string; path: string; needs?: Right }> = [
  { label: 'Agents', path: 'agents' },
  { label: 'Triggers', path: 'triggers' },
  { label: 'Webhooks', path: 'webhooks' },
  { label: 'Runs', path: 'runs' },
  { label: 'Approvals', path: 'approvals' },
  { label: 'Team', path: 'team' },
  { label: 'API keys', path: 'api-keys' },
  { label: 'Audit log', path: 'audit', needs: 'audit' },
  { label: 'Usage', path: 'usage' },
];

/**
 * The app shell of a workspace (/w/:accountId/…): navigation, the Account switcher (sends Account-Id), the
 * balance and the caller's role there, always in view, and sign-out.
 */
export function WorkspaceLayout() {
  const { accountId = '' } = useParams();
  // Before any screen below renders (and fetches), requests act in the account of this URL.
  setActingAccount(accountId);
  const accounts = useAccounts();
  const navigate = useNavigate();
  const location = useLocation();
  const navigation = useNavigation();
  const [opened, { toggle, close }] = useDisclosure();
  const acting = accounts.data?.find((a) => a.id === accountId);
  const summary = useAccountSummary();
  const pending = usePendingApprovalCount();
  const pendingId = useId();

  if (accounts.data && !acting) {
    // A link to an account the caller cannot act in (never was, or was removed): say so, and offer their own.
    const own = accounts.data[0];
    return (
      <Container py="xl">
        <ApiErrorAlert error={new Error('You cannot act in the account this link names: you are not its owner or an active member.')} title="Not your account" />
        {own && (
          <Button mt="md" component={Link} to={`/w/${own.id}/agents`}>
            Go to your own account
          </Button>
        )}
      </Container>
    );
  }
  if (accounts.error) return <Container py="xl"><ApiErrorAlert error={accounts.error} /></Container>;
  // The screen below starts its own requests at once (the account is the URL's): it does not wait for the
  // list of accounts, which only says the role. Until then no write control is shown (useCan is false).

  const section = location.pathname.split('/')[3] ?? 'agents';
  const balance = summary.data ? `Balance: ${summary.data.balance.toLocaleString()} units` : 'Balance: …';
  const balanceColor = summary.data && summary.data.balance < 100 ? 'orange' : 'teal';
  const role = `Role: ${acting?.role ?? '…'}`;
  const leave = () => void signOut().then(() => navigate('/signin'));
  return (
    <AppShell header={{ height: 60 }} navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Toggle navigation" />
            <Title order={2} size="h4" visibleFrom="xs">
              <Text component={Link} to={`/w/${accountId}/agents`} inherit c="inherit" td="none">
                Agent Platform
              </Text>
            </Title>
          </Group>
          <Group gap="sm" wrap="nowrap">
            <NativeSelect
              aria-label="Account"
              size="sm"
              maw={{ base: 150, md: 320 }}
              value={accountId}
              data={accounts.data ? accounts.data.map((a, i) => ({ value: a.id, label: i === 0 ? `${a.name} (yours)` : a.name })) : [{ value: accountId, label: 'Loading accounts…' }]}
              onChange={(e) => navigate(`/w/${e.currentTarget.value}/${SECTIONS.some((s) => s.path === section) ? section : 'agents'}`)}
            />
            <Group gap="sm" wrap="nowrap" visibleFrom="md">
              <Tooltip label="The acting account's balance; creating a non-template agent spends from it">
                <Badge size="lg" variant="light" color={balanceColor} aria-live="polite">
                  {balance}
                </Badge>
              </Tooltip>
              <Badge size="lg" variant="outline" color="gray">
                {role}
              </Badge>
              <Button variant="default" size="sm" onClick={leave}>
                Sign out
              </Button>
            </Group>
            {/* A narrow screen (a phone): the balance, the role and Sign out in a pop-over, readable, not squeezed off the header. */}
            <Popover position="bottom-end" withinPortal trapFocus shadow="md">
              <Popover.Target>
                <ActionIcon variant="default" size="lg" aria-label="Your account" hiddenFrom="md">
                  <Text component="span" aria-hidden="true" fw={700} lh={1}>
                    ⋮
                  </Text>
                </ActionIcon>
              </Popover.Target>
              <Popover.Dropdown aria-label="Your account">
                <Stack gap="xs">
                  <Text size="sm">{balance}</Text>
                  <Text size="sm">{role}</Text>
                  <Button variant="default" size="sm" onClick={leave}>
                    Sign out
                  </Button>
                </Stack>
              </Popover.Dropdown>
            </Popover>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Main">
        <ScrollArea>
          {SECTIONS.filter((s) => !s.needs || allows(acting, s.needs)).map((s) => (
            <MantineNavLink
              key={s.path}
              component={NavLink}
              to={`/w/${accountId}/${s.path}`}
              label={s.label}
              onClick={close}
              active={section === s.path}
              // The pending approvals' count beside `Approvals` is the link's description ("2 pending"), so its name stays `Approvals`.
              {...(s.path === 'approvals' && pending
                ? {
                    'aria-label': s.label,
                    'aria-describedby': pendingId,
                    rightSection: (
                      <Badge id={pendingId} size="sm" color={pending.count > 0 ? 'orange' : 'gray'} variant={pending.count > 0 ? 'filled' : 'light'}>
                        {pending.more ? `${pending.count}+` : pending.count}
                        <VisuallyHidden> pending</VisuallyHidden>
                      </Badge>
                    ),
                  }
                : {})}
            />
          ))}
        </ScrollArea>
      </AppShell.Navbar>
      <AppShell.Main>
        <Container size="xl" px={0}>
          {navigation.state === 'loading' && <Loading label="Opening" />}
          <Suspense fallback={<Loading />}>
            <Outlet />
          </Suspense>
        </Container>
      </AppShell.Main>
    </AppShell>
  );
}

