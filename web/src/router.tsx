import { createBrowserRouter, Navigate } from 'react-router';
import { RequireSession } from './shell/RequireSession';
import { WorkspaceLayout } from './shell/WorkspaceLayout';
import { HomeRedirect, NotFound } from './shell/misc';
import { SignIn } from './screens/SignIn';

/**
 * Every object has a URL. A workspace's screens live under /w/:accountId (the account they act in), so a
 * link a member shares opens in the same account. Screens load on first visit (route-level code splitting).
 */
export const router = createBrowserRouter([
  { path: '/signin', element: <SignIn /> },
  {
    element: <RequireSession />,
    children: [
      { index: true, element: <HomeRedirect /> },
      {
        path: 'w/:accountId',
        element: <WorkspaceLayout />,
        children: [
          { index: true, element: <Navigate to="agents" replace /> },
          { path: 'agents', lazy: () => import('./screens/agents/AgentsList').then((m) => ({ Component: m.AgentsList })) },
          {
            path: 'agents/:agentId',
            lazy: () => import('./screens/agents/AgentPage').then((m) => ({ Component: m.AgentPage })),
            children: [
              { index: true, element: <Navigate to="overview" replace /> },
              { path: 'overview', lazy: () => import('./screens/agents/AgentOverview').then((m) => ({ Component: m.AgentOverview })) },
              { path: 'tools', lazy: () => import('./screens/agents/AgentTools').then((m) => ({ Component: m.AgentTools })) },
              { path: 'connectors', lazy: () => import('./screens/agents/AgentConnectors').then((m) => ({ Component: m.AgentConnectors })) },
              { path: 'triggers', lazy: () => import('./screens/agents/AgentTriggers').then((m) => ({ Component: m.AgentTriggers })) },
              { path: 'runs', lazy: () => import('./screens/agents/AgentRuns').then((m) => ({ Component: m.AgentRuns })) },
            ],
          },
          { path: 'runs', lazy: () => import('./screens/runs/RunsList').then((m) => ({ Component: m.RunsList })) },
          { path: 'approvals', lazy: () => import('./screens/approvals/ApprovalsList').then((m) => ({ Component: m.ApprovalsList })) },
          { path: 'runs/:runId', lazy: () => import('./screens/runs/RunPage').then((m) => ({ Component: m.RunPage })) },
          { path: 'agents/:agentId/tools/:toolId', lazy: () => import('./screens/agents/ToolPage').then((m) => ({ Component: m.ToolPage })) },
          { path: 'agents/:agentId/triggers/:triggerId', lazy: () => import('./screens/triggers/TriggerPage').then((m) => ({ Component: m.AgentTriggerPage })) },
          { path: 'triggers', lazy: () => import('./screens/triggers/TriggersList').then((m) => ({ Component: m.TriggersList })) },
          { path: 'triggers/:triggerId', lazy: () => import('./screens/triggers/TriggerPage').then((m) => ({ Component: m.UserTriggerPage })) },
          { path: 'webhooks', lazy: () => import('./screens/webhooks/WebhooksList').then((m) => ({ Component: m.WebhooksList })) },
          { path: 'webhooks/:webhookId', lazy: () => import('./screens/webhooks/WebhookPage').then((m) => ({ Component: m.WebhookPage })) },
          { path: 'team', lazy: () => import('./screens/team/Team').then((m) => ({ Component: m.Team })) },
          { path: 'api-keys', lazy: () => import('./screens/api-keys/ApiKeys').then((m) => ({ Component: m.ApiKeys })) },
          { path: 'audit', lazy: () => import('./screens/audit/AuditLog').then((m) => ({ Component: m.AuditLog })) },
          { path: 'usage', lazy: () => import('./screens/usage/Usage').then((m) => ({ Component: m.Usage })) },
          { path: '*', element: <NotFound /> },
        ],
      },
    ],
  },
  { path: '*', element: <NotFound /> },
]);
