import { z } from 'zod';
import { pageRequest, sendPage } from '../pagination';
import { authErrors, errorSchema, idParams, listQuery, noContent } from '../schemas/common';
import { createTeamMemberBody, invitationSchema, teamListQuery, teamMemberSchema, updateTeamMemberBody } from '../schemas/team';
import type { TeamService } from '../services/team-service';
import { callerOf, type App } from '../types';

/** The team of the caller's account (`/api/team`) and the caller's invitations to other accounts (`/api/invitations`). */
export function teamRoutes(app: App, deps: { team: TeamService; publicBaseUrl: string }): void {
  const { team } = deps;
  const tags = ['team'];
  const itemErrors = { 404: errorSchema, ...authErrors };

  app.get(
    '/api/team',
    {
      schema: {
        tags,
        description: 'Members of the caller\'s account, newest first. By default invited and active ones; `status=removed` lists the history.',
        querystring: teamListQuery,
        response: { 200: z.array(teamMemberSchema), 400: errorSchema, ...authErrors },
      },
    },
    async (request, reply) =>
      sendPage(request, reply, await team.list(callerOf(request), request.query.status, pageRequest(request.query)), deps.publicBaseUrl),
  );

  app.post(
    '/api/team',
    {
      schema: {
        tags,
        description: 'Invites a member by email. 409 when a member or open invitation with that email (case-insensitive) exists.',
        body: createTeamMemberBody,
        response: { 201: teamMemberSchema, 400: errorSchema, 409: errorSchema, 422: errorSchema, ...authErrors },
      },
    },
    async (request, reply) => reply.code(201).send(await team.invite(callerOf(request), request.body)),
  );

  app.get('/api/team/:id', { schema: { tags, params: idParams, response: { 200: teamMemberSchema, ...itemErrors } } }, async (request) =>
    team.get(callerOf(request), request.params.id),
  );

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/api/team/:id',
      schema: {
        tags,
        description: 'Partial update of role and/or permissions. Permissions merge onto the stored overrides; null removes one.',
        params: idParams,
        body: updateTeamMemberBody,
        response: { 200: teamMemberSchema, 400: errorSchema, ...itemErrors },
      },
      handler: async (request) => team.update(callerOf(request), request.params.id, request.body),
    });
  }

  app.delete(
    '/api/team/:id',
    {
      schema: {
        tags,
        description: 'Removes the member (or withdraws the invitation); the row stays as history (`GET /api/team?status=removed`).',
        params: idParams,
        response: { 204: noContent, ...itemErrors },
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
      schema: {
        tags,
        description: 'Open invitations addressed to the caller\'s email, from any account.',
        querystring: listQuery,
        response: { 200: z.array(invitationSchema), 400: errorSchema, ...authErrors },
      },
    },
    async (request, reply) => sendPage(request, reply, await team.listInvitations(callerOf(request), pageRequest(request.query)), deps.publicBaseUrl),
  );

  app.post(
    '/api/invitations/:id/accept',
    {
      schema: {
        tags,
        description: 'Accepts an invitation addressed to the caller: the membership becomes active. 404 to anyone else; 409 to the addressee when it is no longer open.',
        params: idParams,
        response: { 200: teamMemberSchema, 400: errorSchema, 409: errorSchema, 422: errorSchema, ...itemErrors },
      },
    },
    async (request) => team.acceptInvitation(callerOf(request), request.params.id),
  );
}
