import { z } from 'zod';
import { pageRequest, sendPage } from '../pagination';
import { errorResponse, idParams, listQuery, noContent } from '../schemas/common';
import {
  acceptInvitationBody,
  createTeamMemberBody,
  invitationSchema,
  invitedTeamMemberSchema,
  teamListQuery,
  teamMemberSchema,
  updateTeamMemberBody,
} from '../schemas/team';
import type { TeamService } from '../services/team-service';
import { callerOf, type App } from '../types';

/** The team of the account acted in (`/api/team`) and the caller's invitations to other accounts (`/api/invitations`). */
export function teamRoutes(app: App, deps: { team: TeamService; publicBaseUrl: string }): void {
  const { team } = deps;
  const tags = ['team'];

  app.get(
    '/api/team',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'List team members',
        description:
          'Members of the account acted in, newest first (its owner is not a member). By default invited and active ones; ' +
          '`status=removed` lists the history.',
        querystring: teamListQuery,
        response: { 200: z.array(teamMemberSchema) },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await team.list(callerOf(request), request.query.status, pageRequest(request.query)), deps.publicBaseUrl),
  );

  app.post(
    '/api/team',
    {
      config: { access: 'manageTeam' },
      schema: {
        tags,
        summary: 'Invite a member',
        description:
          'Invites a member by email with a role (admin, editor, viewer) and optional permission overrides. The response carries ' +
          'inviteToken, shown this once: hand it to the invitee, who accepts with POST /api/invitations/{id}/accept { token } while ' +
          "signed in with the invited email, before expiresAt (INVITATION_TTL from now). The account owner's email is refused (400): " +
          'the owner is never a member. Needs canManageTeam; a member grants at most their own role and only permissions they hold ' +
          '(the effective set: role defaults and overrides), the owner anything. An expired invitation to the same email is ' +
          'withdrawn (kept as history) and no longer blocks the invite.',
        body: createTeamMemberBody,
        response: {
          201: invitedTeamMemberSchema,
          400: errorResponse("The email is the account owner's."),
          403: errorResponse('The invite grants a role above yours or a permission you lack; the message names it.'),
          409: errorResponse('A member or open invitation with this email (in any case) exists.'),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await team.invite(callerOf(request), request.body)),
  );

  app.get(
    '/api/team/:id',
    {
      config: { access: 'read' },
      schema: {
        tags,
        summary: 'Get a team member',
        description: 'One invited or active member (a removed one answers 404).',
        params: idParams,
        response: { 200: teamMemberSchema },
      },
    },
    async (request) => team.get(callerOf(request), request.params.id),
  );

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/api/team/:id',
      config: { access: 'manageTeam' },
      schema: {
        tags,
        summary: 'Update a team member',
        description:
          'Partial update (PUT and PATCH alike) of role and/or permissions. Permissions merge onto the stored overrides; null removes ' +
          "one. Takes effect on the member's next request. Needs canManageTeam. A member may not change their own membership, nor " +
          'a member who holds more than they do (a higher role, or a permission they lack), and the result (role and effective ' +
          'permissions) must be within their own; the owner may change anyone.',
        params: idParams,
        body: updateTeamMemberBody,
        response: {
          200: teamMemberSchema,
          403: errorResponse(
            'Your own membership, a member who holds more than you, or a result beyond your own role or permissions; the message names which.',
          ),
        },
      },
      handler: async (request) => team.update(callerOf(request), request.params.id, request.body),
    });
  }

  app.delete(
    '/api/team/:id',
    {
      config: { access: 'teamRemove' },
      schema: {
        tags,
        summary: 'Remove a team member',
        description:
          'Removes the member (or withdraws the invitation): they lose access to the account on their next request, and a write of ' +
          'theirs still under way is refused. The row stays as history (`GET /api/team?status=removed`). Any member may remove ' +
          'themselves (leave: no right needed); with canManageTeam, members who hold no more than they do; the owner anyone.',
        params: idParams,
        response: {
          204: noContent,
          403: errorResponse(
            'Another member than yourself, and your permissions lack canManageTeam; or the member holds more than you (a higher role, or a permission you lack).',
          ),
        },
      },
    },
    async (request, reply) => {
      await team.remove(callerOf(request), request.params.id);
      return reply.code(204).send();
    },
  );

  app.get(
    '/api/invitations',
    {
      config: { access: 'self' },
      schema: {
        tags,
        summary: 'List your invitations',
        description: "Open invitations addressed to the caller's email, from any account: not yet accepted, withdrawn or expired.",
        querystring: listQuery,
        response: { 200: z.array(invitationSchema) },
      },
    },
    async (request, reply) => sendPage(request, reply, await team.listInvitations(callerOf(request), pageRequest(request.query)), deps.publicBaseUrl),
  );

  app.post(
    '/api/invitations/:id/accept',
    {
      config: { access: 'self' },
      schema: {
        tags,
        summary: 'Accept an invitation',
        description:
          "Accepts an invitation addressed to the caller's email, with its inviteToken: the membership becomes active, with the " +
          'caller as its user, who may then act in the account (Account-Id header). A wrong token, or a caller with another email, ' +
          'gets 404 as for an unknown invitation.',
        params: idParams,
        body: acceptInvitationBody,
        response: {
          200: teamMemberSchema,
          404: errorResponse('No invitation with this id and this token addressed to your email.'),
          409: errorResponse('The invitation is no longer open: accepted, withdrawn, or expired (the message says when).'),
        },
      },
    },
    async (request) => team.acceptInvitation(callerOf(request), request.params.id, request.body.token),
  );
}
