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

/**
 * A list in a fixed order of positions rather than newest first (a run's steps, by index): the cursor
 * holds the last position seen.
 */
export interface IndexPageRequest {
  limit: number;
  afterIndex?: number;
}
export interface IndexPage<T> {
  items: T[];
  nextAfter?: number;
}

export function indexPageRequest(query: ListQuery): IndexPageRequest {
  if (!query.cursor) return { limit: query.limit };
  try {
    const value: unknown = JSON.parse(Buffer.from(query.cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 1 && Number.isSafeInteger(value[0]) && value[0] >= 0) return { limit: query.limit, afterIndex: value[0] };
  } catch {
    // fall through
  }
  throw new ValidationError('querystring.cursor: is not a valid cursor');
}

const nextCursorOf = (page: Page<unknown> | IndexPage<unknown>): string | undefined => {
  if ('nextAfter' in page) return page.nextAfter === undefined ? undefined : Buffer.from(JSON.stringify([page.nextAfter])).toString('base64url');
  return 'next' in page && page.next ? encodeCursor(page.next) : undefined;
};

/** Sends a page as a JSON array, with `Link: <…>; rel="next"` when more remain. */
export function sendPage<T>(request: FastifyRequest, reply: FastifyReply, page: Page<T> | IndexPage<T>, publicBaseUrl: string): T[] {
  const cursor = nextCursorOf(page);
  if (cursor) {
    const url = new URL(request.url, publicBaseUrl);
    url.searchParams.set('cursor', cursor);
    url.searchParams.set('limit', String((request.query as ListQuery).limit));
    reply.header('Link', `<${publicBaseUrl}${url.pathname}${url.search}>; rel="next"`);
  }
  return page.items;
}
