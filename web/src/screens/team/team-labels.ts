import type { Schemas } from '../../api/client';

export type Member = Schemas['TeamMember'];
export type Role = Member['role'];
export type PermissionKey = keyof Schemas['TeamPermissions'];

export const PERMISSIONS: Array<{ key: PermissionKey; label: string; what: string }> = [
  { key: 'canExport', label: 'Export', what: 'download agents as JSON' },
  { key: 'canDelete', label: 'Delete', what: 'delete agents, triggers, webhooks and the rest' },
  { key: 'canManageTeam', label: 'Manage team', what: 'invite, change and remove members' },
];

/** What each role may do (docs/api.md § Workspaces); the owner may do everything. */
export const ROLES: Array<{ role: Role; what: string }> = [
  { role: 'admin', what: 'Everything, and the audit log; by default also export, delete and manage the team' },
  { role: 'editor', what: 'Create, change, fire and run; by default also export and delete' },
  { role: 'viewer', what: 'Read only: sees everything, changes nothing' },
];
