import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Page, PageKey, PageRequest } from '../db/paging';
import { ValidationError } from './errors';
import type { ListQuery } from './schemas/common';

/** Re-exported so route modules name a page without importing from db/. */
export type { Page, PageRequest };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function encodeCursor(key: PageKey): string {
  return Buffer.from(JSON.stringify([key.createdAt, key.id])).toString('base64url');
}

export function decodeCursor(cursor: string): PageKey {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2) {
      const [createdAt, id] = value as unknown[];
      if (typeof createdAt === 'string' && !Number.isNaN(Date.parse(createdAt)) && typeof id === 'string' && UUID.test(id)) {
        return { createdAt, id };
      }
    }
  } catch {
    // fall through
  }
  throw new ValidationError('querystring.cursor: is not a valid cursor');
}

export function pageRequest(query: ListQuery): PageRequest {
  return { limit: query.limit, after: query.cursor ? decodeCursor(query.cursor) : undefined };
}

/** Sends a page as a JSON array, with `Link: <…>; rel="next"` when more remain. */
export function sendPage<T>(request: FastifyRequest, reply: FastifyReply, page: Page<T>, publicBaseUrl: string): T[] {
  if (page.next) {
    const url = new URL(request.url, publicBaseUrl);
    url.searchParams.set('cursor', encodeCursor(page.next));
    url.searchParams.set('limit', String((request.query as ListQuery).limit));
    reply.header('Link', `<${publicBaseUrl}${url.pathname}${url.search}>; rel="next"`);
  }
  return page.items;
}
