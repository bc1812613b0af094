import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { buildApp } from '../../api/app';
import type { Db } from '../../db/pool';
import type { Config } from '../../lib/config';
import { createTemporalClient } from '../../engine/temporal/client';
import { api } from './api';
import { onCleanup, type Cleanup } from './cleanup';
import { testConfig } from './config';
import { createTestDatabase, type TestDatabase } from './database';

export type TestApp = Awaited<ReturnType<typeof buildApp>>;

export interface StartedApp {
  app: TestApp;
  db: Db;
  config: Config;
  database: TestDatabase;
}

/**
 * The real app on a fresh database (cloned from the migrated template) and the test Temporal server,
 * closed (and the database dropped) when `t` ends. `database` puts it on that database instead, as a
 * second instance behind a load balancer would be.
 */
export async function startTestApp(t: Cleanup, overrides: Record<string, string> = {}, database?: TestDatabase): Promise<StartedApp> {
  database ??= await createTestDatabase(t);
  const config = testConfig(database.url, overrides);
  const temporal = createTemporalClient(config);
  onCleanup(t, () => temporal.close());
  const app = await buildApp({ config, db: database.db, temporal, logger: false });
  onCleanup(t, () => app.close());
  await app.ready();
  return { app, db: database.db, config, database };
}

export interface TestUser {
  id: string;
  email: string;
  accessToken: string;
  refreshToken: string;
  auth: { authorization: string };
}

let counter = 0;

/**
 * Registers a fresh user, on the app or an API process's base URL; through the app each call comes from
 * its own client address so the auth rate limit stays out of the way.
 */
export async function registerUser(target: TestApp | string, email = `user${++counter}-${randomBytes(3).toString('hex')}@example.com`): Promise<TestUser> {
  const remoteAddress = `10.1.${counter % 250}.${Math.floor(Math.random() * 250)}`;
  const res = await api(target, null, { remoteAddress }).post('/api/auth/register', { email, password: 'correct horse battery', name: 'Test User' });
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
    const res = await api(app, user).get(url);
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
