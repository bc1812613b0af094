import { PERMISSION_KEYS, type CustomPermissions, type Permissions, type TeamRole, type UpdateTeamMemberInput } from '../schemas/team';

/** Default permissions of each role (docs/api.md § Team and invitations). */
export const ROLE_PERMISSIONS: Readonly<Record<TeamRole, Readonly<Permissions>>> = {
  admin: { canExport: true, canDelete: true, canManageTeam: true },
  editor: { canExport: true, canDelete: true, canManageTeam: false },
  viewer: { canExport: false, canDelete: false, canManageTeam: false },
};

/** The role's defaults overridden by the member's custom booleans. */
export function effectivePermissions(role: TeamRole, custom: CustomPermissions): Permissions {
  const out = { ...ROLE_PERMISSIONS[role] };
  for (const key of PERMISSION_KEYS) {
    const value = custom[key];
    if (typeof value === 'boolean') out[key] = value;
  }
  return out;
}

/** Custom overrides after a patch: a boolean sets the override, null removes it, absent keeps it. */
export function mergeOverrides(current: CustomPermissions, patch: NonNullable<UpdateTeamMemberInput['permissions']>): CustomPermissions {
  const out: CustomPermissions = { ...current };
  for (const key of PERMISSION_KEYS) {
    const value = patch[key];
    if (value === null) delete out[key];
    else if (value !== undefined) out[key] = value;
  }
  return out;
}

/** The order of roles: a member may hand out their own role and the ones below it. */
const ROLE_RANK: Readonly<Record<TeamRole, number>> = { viewer: 0, editor: 1, admin: 2 };

/** What a member holds or would be given: a role and the effective permissions. */
export interface Holding {
  role: TeamRole;
  permissions: Permissions;
}

/**
 * What `other` holds beyond `held`, as the words of a refusal: `the admin role` when its role ranks higher,
 * then each permission it has that `held` lacks. Empty when `other` is within `held`.
 */
export function beyond(held: Holding, other: Holding): string[] {
  const out: string[] = [];
  if (ROLE_RANK[other.role] > ROLE_RANK[held.role]) out.push(`the ${other.role} role`);
  for (const key of PERMISSION_KEYS) if (other.permissions[key] && !held.permissions[key]) out.push(key);
  return out;
}
