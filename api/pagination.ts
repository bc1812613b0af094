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

/**
 * A timestamptz as Postgres prints it (DateStyle ISO), which is how a cursor carries created_at:
 * `2026-11-21 11:00:00.123456+00`, the offset that of the session's time zone (`+05:30`, `-00:44:30`).
 */
const PG_TIMESTAMPTZ = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.\d{1,6})?[+-](\d{2})(?::(\d{2})(?::(\d{2}))?)?$/;

/**
 * Only what Postgres could have printed: its form, a date that exists, a time of day, and an offset it
 * accepts (under 16 h). Date.parse is no test: it takes "1", which Postgres refuses with an error.
 */
function isPrintedTimestamp(text: string): boolean {
  const match = PG_TIMESTAMPTZ.exec(text);
  if (!match) return false;
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes, offsetSeconds] = match.slice(1, 10).map((part) => Number(part ?? 0)) as [
    number, number, number, number, number, number, number, number, number,
  ];
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day); // not Date.UTC, which reads years 0–99 as 1900–1999
  const realDate = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  return realDate && hour < 24 && minute < 60 && second < 60 && offsetHours < 16 && offsetMinutes < 60 && offsetSeconds < 60;
}

/** The JSON a cursor carries (base64url), or undefined when it carries none. */
function cursorJson(cursor: string): unknown {
  try {
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}
const invalidCursor = () => new ValidationError('querystring.cursor: is not a valid cursor');

export function decodeCursor(cursor: string): PageKey {
  const value = cursorJson(cursor);
  if (Array.isArray(value) && value.length === 2) {
    const [createdAt, id] = value as unknown[];
    if (typeof createdAt === 'string' && isPrintedTimestamp(createdAt) && typeof id === 'string' && UUID.test(id)) {
      return { createdAt, id };
    }
  }
  throw invalidCursor();
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
  const value = cursorJson(query.cursor);
  if (Array.isArray(value) && value.length === 1 && Number.isSafeInteger(value[0]) && value[0] >= 0) return { limit: query.limit, afterIndex: value[0] };
  throw invalidCursor();
}

/** A list ordered by a pair of positions (a delivery's attempts: generation, then attempt); the cursor holds the last pair seen. */
export interface PairPageRequest {
  limit: number;
  after: [number, number] | null;
}

export const encodePairCursor = (pair: [number, number]): string => Buffer.from(JSON.stringify(pair)).toString('base64url');

export function pairPageRequest(query: ListQuery): PairPageRequest {
  if (!query.cursor) return { limit: query.limit, after: null };
  const value = cursorJson(query.cursor);
  if (Array.isArray(value) && value.length === 2 && value.every((n) => Number.isSafeInteger(n) && n >= 0 && n <= 2_147_483_647)) {
    return { limit: query.limit, after: value as [number, number] };
  }
  throw invalidCursor();
}

/** A page whose service made its own cursor (e.g. the last time listed). */
export interface CursorPage<T> {
  items: T[];
  cursor?: string;
}

const nextCursorOf = (page: Page<unknown> | IndexPage<unknown> | CursorPage<unknown>): string | undefined => {
  if ('cursor' in page) return page.cursor;
  if ('nextAfter' in page) return page.nextAfter === undefined ? undefined : Buffer.from(JSON.stringify([page.nextAfter])).toString('base64url');
  return 'next' in page && page.next ? encodeCursor(page.next) : undefined;
};

/** Sends a page as a JSON array, with `Link: <…>; rel="next"` when more remain. */
export function sendPage<T>(request: FastifyRequest, reply: FastifyReply, page: Page<T> | IndexPage<T> | CursorPage<T>, publicBaseUrl: string): T[] {
  const cursor = nextCursorOf(page);
  if (cursor) {
    const url = new URL(request.url, publicBaseUrl);
    url.searchParams.set('cursor', cursor);
    url.searchParams.set('limit', String((request.query as ListQuery).limit));
    reply.header('Link', `<${publicBaseUrl}${url.pathname}${url.search}>; rel="next"`);
  }
  return page.items;
}
