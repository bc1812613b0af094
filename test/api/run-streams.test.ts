import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { before, describe, it } from 'node:test';
import type { Db } from '../../db/pool';
import { createTokenService } from '../../api/services/tokens';
import type { Config } from '../../lib/config';
import { api } from '../helpers/api';
import { registerUser, startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { onCleanup, suiteContext } from '../helpers/cleanup';
import { waitFor } from '../helpers/processes';
import { openSse, type SseStream } from '../helpers/sse';
import { accountIdOf, joinWorkspace } from '../helpers/workspaces';

/**
 * Live run streams are bounded (docs/api.md § Live run streams): a cap per user that every API instance
 * shares, a ceiling per process, and a stream ends when its caller loses access. Two API instances share one
 * database, as behind a load balancer. No worker runs here: every run stays queued, so its stream stays open
 * (a heartbeat a minute) until something ends it.
 */
const PER_USER = 3;
const PER_ACCOUNT = 4;
const CHECK_MS = 200;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('live run streams: caps and access', () => {
  const suite = suiteContext();
  let a: TestApp;
  let b: TestApp;
  let db: Db;
  let config: Config;
  let baseA: string;
  let baseB: string;
  const open: SseStream[] = [];

  const env = { RUN_STREAMS_PER_USER: String(PER_USER), RUN_STREAMS_PER_ACCOUNT: String(PER_ACCOUNT), RUN_STREAMS_CHECK_MS: String(CHECK_MS), RUN_EVENTS_HEARTBEAT_MS: '60000' };
  async function listening(app: TestApp): Promise<string> {
    await app.listen({ port: 0, host: '127.0.0.1' });
    return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  }

  before(async () => {
    const first = await startTestApp(suite, env);
    ({ app: a, db, config } = first);
    ({ app: b } = await startTestApp(suite, env, first.database));
    baseA = await listening(a);
    baseB = await listening(b);
    // Undone last first: the streams close, then the servers stop listening and drop what the test's
    // clients left connected (app.close() alone waited ~70 s here for a connection of the first instance),
    // then the apps close.
    onCleanup(suite, () =>
      Promise.all([a, b].map((app) => new Promise((resolve) => {
        app.server.close(resolve);
        app.server.closeAllConnections();
      }))),
    );
    onCleanup(suite, () => open.forEach((s) => s.close()));
  });

  /** A queued run of an agent of the account `headers` act in. */
  async function queuedRun(headers: Record<string, string>, input: unknown = 'go'): Promise<string> {
    const agent = await api(a).ok('POST', '/api/agents', { name: 'streamed' }, headers);
    return (await api(a).ok('POST', `/api/agents/${agent.id}/runs`, { input }, headers)).id;
  }

  async function stream(base: string, runId: string, headers: Record<string, string>): Promise<SseStream> {
    const s = await openSse(`${base}/api/runs/${runId}/events`, headers);
    open.push(s);
    return s;
  }

  /** Opens a stream that must be refused; answers the response. */
  async function refused(base: string, runId: string, headers: Record<string, string>, status: number): Promise<Response & { message: string }> {
    const res = await fetch(`${base}/api/runs/${runId}/events`, { headers });
    if (res.status !== status) {
      await res.body?.cancel(); // a stream that was let through never ends by itself
      assert.fail(`${res.status} instead of ${status}`);
    }
    const body = (await res.json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body), ['message']);
    if (status === 429 || status === 503) {
      const retryAfter = Number(res.headers.get('retry-after'));
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After ${res.headers.get('retry-after')}`);
    }
    return Object.assign(res, { message: body.message as string });
  }

  /** 'ended' once the server ends the stream within `ms`, else 'open'. */
  const endsWithin = (s: SseStream, ms: number) => Promise.race([s.ended.then(() => 'ended'), sleep(ms).then(() => 'open')]);

  it(`opens at most RUN_STREAMS_PER_USER (${PER_USER}) per user across API instances; the next answers 429 with Retry-After; a closed one gives its place back`, async () => {
    const user = await registerUser(a);
    const runId = await queuedRun(user.auth);
    const streams = [await stream(baseA, runId, user.auth), await stream(baseB, runId, user.auth), await stream(baseA, runId, user.auth)];
    for (const s of streams) assert.equal(s.status, 200);
    await waitFor('the streams to start', async () => streams.every((s) => s.received.length > 0), 5_000);
    for (const base of [baseA, baseB]) {
      const res = await refused(base, runId, user.auth, 429);
      assert.match(res.message, /at most 3 live run streams per user \(RUN_STREAMS_PER_USER\)/);
    }
    // Another user has places of their own.
    const other = await registerUser(a);
    assert.equal((await stream(baseB, await queuedRun(other.auth), other.auth)).status, 200);

    streams[1]!.close();
    const again = await waitFor('a place again once a stream closed', async () => {
      const s = await stream(baseB, runId, user.auth);
      return s.status === 200 && s;
    }, 5_000);
    assert.equal(again.status, 200);
  });

  it(`opens at most RUN_STREAMS_PER_ACCOUNT (${PER_ACCOUNT}) per account across API instances, its users' together`, async () => {
    const owner = await registerUser(a);
    const member = await joinWorkspace(a, owner, 'viewer');
    const runId = await queuedRun(owner.auth);
    // Two in each instance: no instance holds the account's four alone.
    const streams = [await stream(baseA, runId, owner.auth), await stream(baseB, runId, owner.auth), await stream(baseA, runId, member.headers), await stream(baseB, runId, member.headers)];
    assert.deepEqual(streams.map((s) => s.status), [200, 200, 200, 200]);
    for (const base of [baseA, baseB]) {
      const res = await refused(base, runId, member.headers, 429);
      assert.match(res.message, /^at most 4 live run streams per account \(RUN_STREAMS_PER_ACCOUNT\) are open at once: close one, or try again in \d+ s$/);
    }
    streams[0]!.close();
    const again = await waitFor('a place again once a stream of the account closed', async () => {
      const s = await stream(baseB, runId, member.headers);
      return s.status === 200 && s;
    }, 5_000);
    assert.equal(again.status, 200);
  });

  it('a place held by a process that died (its row no longer renewed) counts until it expires', async () => {
    // No stream open in either instance, so neither sweeps expired places meanwhile: the count alone must skip them.
    open.splice(0).forEach((s) => s.close());
    // Each place is given back when its API sees the close, which a loaded machine can take seconds to do.
    await waitFor('the other tests\' places given back', async () => (await db.query(`SELECT 1 FROM run_stream_leases`)).rows.length === 0, 15_000);
    const user = await registerUser(a);
    const runId = await queuedRun(user.auth);
    await db.query(
      `INSERT INTO run_stream_leases (id, user_id, account_id, expires_at) SELECT gen_random_uuid(), $1, $2, now() + interval '1 second' FROM generate_series(1, $3)`,
      [user.id, await accountIdOf(a, user), PER_USER],
    );
    await refused(baseA, runId, user.auth, 429);
    const started = Date.now();
    await waitFor('the dead process\'s places to expire', async () => {
      const s = await stream(baseA, runId, user.auth);
      return s.status === 200;
    }, 10_000);
    console.log(`a dead process's places stopped counting ${Date.now() - started} ms after the refusal (they expired after 1 s)`);
  });

  it('ends a removed member\'s stream within RUN_STREAMS_CHECK_MS; the owner\'s stream of the same run goes on', async () => {
    const owner = await registerUser(a);
    const member = await joinWorkspace(a, owner, 'viewer');
    const runId = await queuedRun(owner.auth);
    const own = await stream(baseA, runId, owner.auth);
    const theirs = await stream(baseB, runId, member.headers);
    assert.equal(theirs.status, 200);
    await waitFor('the streams to start', async () => own.received.length > 0 && theirs.received.length > 0, 5_000);

    assert.equal((await api(a, owner).delete(`/api/team/${member.memberId}`)).statusCode, 204);
    const removedAt = Date.now();
    assert.equal(await endsWithin(theirs, 5_000), 'ended', 'the removed member\'s stream ended');
    console.log(`removed member's stream ended ${Date.now() - removedAt} ms after the removal (RUN_STREAMS_CHECK_MS=${CHECK_MS})`);
    assert.equal(await endsWithin(own, 3 * CHECK_MS), 'open', 'the owner\'s stream goes on');
    // And the member cannot open it again.
    assert.equal((await refused(baseA, runId, member.headers, 404)).message, 'Account not found');
  });

  it('ends a stream whose API key was deleted, and one whose access token expired', async () => {
    const user = await registerUser(a);
    const runId = await queuedRun(user.auth);
    const key = await api(a, user).ok('POST', '/api/auth/api-keys', { name: 'streaming' });
    const byKey = await stream(baseA, runId, { authorization: `Bearer ${key.key}` });
    // An access token of this deployment that expires in 2 s (signed with its JWT_SECRET).
    const shortLived = createTokenService({ jwtSecret: config.auth.jwtSecret, accessTokenTtlSeconds: 2 });
    const byToken = await stream(baseB, runId, { authorization: `Bearer ${shortLived.signAccessToken({ sub: user.id, acc: await accountIdOf(a, user) })}` });
    assert.deepEqual([byKey.status, byToken.status], [200, 200]);
    await waitFor('the streams to start', async () => byKey.received.length > 0 && byToken.received.length > 0, 5_000);

    assert.equal((await api(a, user).delete(`/api/auth/api-keys/${key.id}`)).statusCode, 204);
    const revokedAt = Date.now();
    assert.equal(await endsWithin(byKey, 5_000), 'ended', 'the deleted key\'s stream ended');
    console.log(`deleted API key's stream ended ${Date.now() - revokedAt} ms after the delete`);
    const issuedAt = revokedAt;
    assert.equal(await endsWithin(byToken, 8_000), 'ended', 'the expired token\'s stream ended');
    console.log(`expired token's stream ended ${Date.now() - issuedAt} ms after the key's (the token lived 2 s)`);
  });

  it('a wake-up with nothing new reads no step and no run content again: only what came after the last step sent', async () => {
    open.splice(0).forEach((s) => s.close()); // the other tests' streams: their checks would add to what is read
    const user = await registerUser(a);
    // A large run input (at most 64 KiB) and three large finished steps.
    const runId = await queuedRun(user.auth, { blob: randomBytes(45 * 1024).toString('base64') });
    await db.query(
      `INSERT INTO run_steps (run_id, step_index, type, name, input, output, started_at, finished_at)
       SELECT $1, i, 'tool', 'probe', '{}', to_jsonb($2::text || i), now(), now() FROM generate_series(0, 2) AS i`,
      [runId, randomBytes(150 * 1024).toString('base64')],
    );
    const s = await stream(baseA, runId, user.auth);
    await s.waitForEvents(3, 10_000);
    // What the API's pool read from Postgres (both instances share it; the test's own NOTIFYs are a few bytes).
    const poolBytesRead = () =>
      (db as unknown as { _clients: { connection: { stream: { bytesRead: number } } }[] })._clients.reduce((n, c) => n + c.connection.stream.bytesRead, 0);
    await sleep(300);
    const before = poolBytesRead();
    // 20 wake-ups (as when the run moved), none bringing a new step.
    for (let i = 0; i < 20; i++) {
      await db.query(`SELECT pg_notify('run_events', $1)`, [runId]);
      await sleep(50);
    }
    await sleep(300);
    const read = poolBytesRead() - before;
    console.log(`20 wake-ups with nothing new: the API read ${read} bytes from Postgres (the run's input alone is ${45 * 1024 * 4 / 3} bytes)`);
    assert.ok(read < 45 * 1024, `${read} bytes: less than one read of the run's input in all`);
    assert.equal(s.events().length, 3, 'nothing sent twice');
  });
});

describe('live run streams: the ceiling per API process', () => {
  it('answers 503 with Retry-After past RUN_STREAMS_PER_PROCESS open streams of the process, whoever asks', async (t) => {
    const { app } = await startTestApp(t, { RUN_STREAMS_PER_PROCESS: '2', RUN_EVENTS_HEARTBEAT_MS: '60000' });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const streams: SseStream[] = [];
    onCleanup(t, () => streams.forEach((s) => s.close()));
    const users: TestUser[] = [await registerUser(app), await registerUser(app), await registerUser(app)];
    const runs: string[] = [];
    for (const user of users) {
      const agent = await api(app, user).ok('POST', '/api/agents', { name: 'streamed' });
      runs.push((await api(app, user).ok('POST', `/api/agents/${agent.id}/runs`, { input: 'go' })).id);
    }
    for (const i of [0, 1]) {
      streams.push(await openSse(`${base}/api/runs/${runs[i]}/events`, users[i]!.auth));
      assert.equal(streams[i]!.status, 200);
    }
    const res = await fetch(`${base}/api/runs/${runs[2]}/events`, { headers: users[2]!.auth });
    if (res.status !== 503) await res.body?.cancel();
    assert.equal(res.status, 503);
    assert.ok(Number(res.headers.get('retry-after')) >= 1);
    const body = (await res.json()) as { message: string };
    assert.deepEqual(Object.keys(body), ['message']);
    assert.match(body.message, /RUN_STREAMS_PER_PROCESS/);
  });
});

describe('live run streams: the cap per account', () => {
  it('answers 429 with Retry-After past RUN_STREAMS_PER_ACCOUNT streams of one account, whichever of its users asks; another account goes on', async (t) => {
    const { app } = await startTestApp(t, { RUN_STREAMS_PER_ACCOUNT: '2', RUN_STREAMS_PER_USER: '10', RUN_EVENTS_HEARTBEAT_MS: '60000' });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const streams: SseStream[] = [];
    onCleanup(t, () => streams.forEach((s) => s.close()));
    const owner = await registerUser(app);
    const member = await joinWorkspace(app, owner, 'editor');
    const stranger = await registerUser(app);
    const runOf = async (headers: Record<string, string>) => {
      const agent = await api(app).ok('POST', '/api/agents', { name: 'streamed' }, headers);
      return (await api(app).ok('POST', `/api/agents/${agent.id}/runs`, { input: 'go' }, headers)).id as string;
    };
    const run = await runOf(owner.auth);
    const open = async (runId: string, headers: Record<string, string>) => {
      const s = await openSse(`${base}/api/runs/${runId}/events`, headers);
      streams.push(s);
      return s;
    };
    assert.equal((await open(run, owner.auth)).status, 200);
    assert.equal((await open(run, member.headers)).status, 200);
    const res = await fetch(`${base}/api/runs/${run}/events`, { headers: owner.auth });
    if (res.status !== 429) await res.body?.cancel();
    assert.equal(res.status, 429);
    assert.ok(Number(res.headers.get('retry-after')) >= 1, `Retry-After ${res.headers.get('retry-after')}`);
    const body = (await res.json()) as { message: string };
    assert.deepEqual(body, { message: 'at most 2 live run streams per account (RUN_STREAMS_PER_ACCOUNT) are open at once: close one, or try again in 10 s' });

    assert.equal((await open(await runOf(stranger.auth), stranger.auth)).status, 200);
    streams[0]!.close();
    const again = await waitFor('a place of the account again once its stream closed', async () => {
      const s = await open(run, member.headers);
      return s.status === 200 && s;
    }, 5_000);
    assert.equal(again.status, 200);
  });
});
