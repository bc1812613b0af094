import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../api/app';
import { createTemporalClient } from '../../lib/temporal-client';
import type { Db } from '../../db/pool';
import { testConfig } from './config';
import { createTestDatabase } from './database';

export type TestApp = Awaited<ReturnType<typeof buildApp>>;

/**
 * The real app on a fresh database (cloned from the migrated template) and the test Temporal server.
 * `poolSize` is the app's pool (default 20), which `db` is too.
 */
export async function startTestApp(
  overrides: Record<string, string> = {},
  options: { poolSize?: number } = {},
): Promise<{ app: TestApp; db: Db; close: () => Promise<void> }> {
  const database = await createTestDatabase(options.poolSize);
  const config = testConfig(database.url, overrides);
  const temporal = createTemporalClient(config);
  const app = await buildApp({ config, db: database.db, temporal, logger: false });
  await app.ready();
  return {
    app,
    db: database.db,
    close: async () => {
      await app.close();
      await temporal.close();
      await database.drop();
    },
  };
}

export interface TestUser {
  id: string;
  email: string;
  accessToken: string;
  refreshToken: string;
  auth: { authorization: string };
}

let counter = 0;

/** Registers a fresh user; each call comes from its own client IP so the auth rate limit stays out of the way. */
export async function registerUser(app: TestApp, email = `user${++counter}-${randomBytes(3).toString('hex')}@example.com`): Promise<TestUser> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/auth/register',
    remoteAddress: `10.1.${counter % 250}.${Math.floor(Math.random() * 250)}`,
    payload: { email, password: 'correct horse battery', name: 'Test User' },
  });
  if (res.statusCode !== 201) throw new Error(`register failed: ${res.statusCode} ${res.body}`);
  const body = res.json();
  return {
    id: body.user.id,
    email,
    accessToken: body.accessToken,
    refreshToken: body.refreshToken,
    auth: { authorization: `Bearer ${body.accessToken}` },
  };
}

/**
 * Follows `Link: <…>; rel="next"` from `first` to the last page, asserting each page answers 200.
 * Returns every item in order, the number of pages, each page's size and each next link as a URL.
 */
export async function readAllPages(app: TestApp, user: TestUser, first: string) {
  const items: { id: string }[] = [];
  const sizes: number[] = [];
  const links: URL[] = [];
  let url: string | undefined = first;
  while (url) {
    const res: LightMyRequestResponse = await app.inject({ method: 'GET', url, headers: user.auth });
    assert.equal(res.statusCode, 200, res.body);
    const page = res.json<{ id: string }[]>();
    items.push(...page);
    sizes.push(page.length);
    const link = res.headers.link as string | undefined;
    const next = link ? new URL(/^<([^>]+)>; rel="next"$/.exec(link)![1]!) : undefined;
    if (next) links.push(next);
    url = next ? next.pathname + next.search : undefined;
  }
  return { items, ids: items.map((item) => item.id), pages: sizes.length, sizes, links };
}
