import { z } from 'zod';
import { emailAddress, listQuery, timestamp } from './common';

export const TEAM_ROLES = ['admin', 'editor', 'viewer'] as const;
export type TeamRole = (typeof TEAM_ROLES)[number];
export const MEMBER_STATUSES = ['invited', 'active', 'removed'] as const;
export type MemberStatus = (typeof MEMBER_STATUSES)[number];
export const PERMISSION_KEYS = ['canExport', 'canDelete', 'canManageTeam'] as const;
export type PermissionKey = (typeof PERMISSION_KEYS)[number];

/** The effective set: every key, role default overridden by the member's custom booleans. */
export const permissionsSchema = z
  .object({ canExport: z.boolean(), canDelete: z.boolean(), canManageTeam: z.boolean() })
  .meta({ id: 'TeamPermissions' });
export type Permissions = z.infer<typeof permissionsSchema>;

/** Custom overrides as stored: only the keys that were set. */
const customPermissions = z
  .strictObject({ canExport: z.boolean().optional(), canDelete: z.boolean().optional(), canManageTeam: z.boolean().optional() })
  .meta({ id: 'TeamCustomPermissions' });
export type CustomPermissions = z.infer<typeof customPermissions>;

// A missing enum would otherwise read "Invalid option"; say what is wrong.
const role = z.enum(TEAM_ROLES, { error: (issue) => (issue.input === undefined ? 'is required' : undefined) });

export const createTeamMemberBody = z
  .strictObject({
    email: emailAddress,
    role,
    permissions: customPermissions.optional().describe('Custom booleans overriding the role defaults'),
  })
  .meta({ id: 'InviteTeamMember' });
export type CreateTeamMemberInput = z.infer<typeof createTeamMemberBody>;

export const updateTeamMemberBody = z
  .strictObject({
    role,
    permissions: z
      .strictObject({
        canExport: z.boolean().nullable().optional(),
        canDelete: z.boolean().nullable().optional(),
        canManageTeam: z.boolean().nullable().optional(),
      })
      .describe('Merged onto the stored overrides; null removes an override so the role default applies again'),
  })
  .partial()
  .meta({ id: 'UpdateTeamMember' });
export type UpdateTeamMemberInput = z.infer<typeof updateTeamMemberBody>;

export const teamListQuery = listQuery.extend({
  status: z.enum(MEMBER_STATUSES).optional().describe('Only members in this status; default: invited and active (removed ones only on request)'),
});

export const teamMemberSchema = z
  .object({
    id: z.uuid(),
    accountId: z.uuid(),
    email: z.string(),
    role: z.enum(TEAM_ROLES),
    permissions: permissionsSchema,
    customPermissions: customPermissions.describe('The stored overrides only; keys absent here follow the role'),
    status: z.enum(MEMBER_STATUSES),
    userId: z.uuid().nullable().describe('The user who accepted; null until then'),
    invitedAt: timestamp,
    expiresAt: timestamp
      .nullable()
      .describe('While invited: when the invitation stops being open (INVITATION_TTL after it was made; past once expired). Null once accepted or removed'),
    acceptedAt: timestamp.nullable(),
    removedAt: timestamp.nullable(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'TeamMember' });

export const invitationSchema = z
  .object({
    id: z.uuid(),
    accountId: z.uuid(),
    accountName: z.string(),
    email: z.string(),
    role: z.enum(TEAM_ROLES),
    permissions: permissionsSchema,
    invitedAt: timestamp,
    expiresAt: timestamp.describe('Accept before this; after it the invitation is no longer listed and accepting it answers 409'),
  })
  .meta({ id: 'Invitation' });

/** The invite's 201: the member with the invitation's token, shown in this response only. */
export const invitedTeamMemberSchema = teamMemberSchema
  .extend({
    inviteToken: z
      .string()
      .describe('Shown in this response only (the API stores its SHA-256): pass it to the invitee, who sends it to accept the invitation'),
  })
  .meta({ id: 'InvitedTeamMember' });

export const acceptInvitationBody = z
  .strictObject({ token: z.string().min(1).max(200).describe("The invitation's inviteToken, from whoever invited you") })
  .meta({ id: 'AcceptInvitation' });
