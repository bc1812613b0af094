import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Db } from '../../db/pool';
import { sha256 } from '../../api/services/tokens';
import { api } from '../helpers/api';
import { registerUser, startTestApp, type TestApp } from '../helpers/app';
import { suiteContext } from '../helpers/cleanup';

let ip = 0;
const fromNewIp = () => `10.4.${Math.floor(++ip / 250)}.${ip % 250}`;

/**
 * A revocation (reuse of a rotated token, or logout) racing a rotation of the same family must not miss
 * the token the rotation inserts (docs/api.md § Authentication and tokens: reuse revokes the whole family).
 */
describe('refresh-token families under concurrent rotation, reuse and logout', () => {
  const suite = suiteContext();
  let app: TestApp;
  let db: Db;

  before(async () => {
    ({ app, db } = await startTestApp(suite));
  });

  const refresh = (refreshToken: string) => api(app, null, { remoteAddress: fromNewIp() }).post('/api/auth/refresh', { refreshToken });
  const logout = (refreshToken: string) => api(app, null, { remoteAddress: fromNewIp() }).post('/api/auth/logout', { refreshToken });

  async function liveTokensOfFamily(token: string): Promise<number> {
    const { rows } = await db.query<{ live: number }>(
      `SELECT count(*)::int AS live FROM refresh_tokens
       WHERE family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = $1) AND revoked_at IS NULL`,
      [sha256(token)],
    );
    return rows[0]!.live;
  }

  for (const revoker of ['reuse of a rotated token', 'logout'] as const) {
    it(`leaves no working token in a family revoked by ${revoker} during rotations`, async () => {
      for (let round = 0; round < 15; round++) {
        const user = await registerUser(app);
        const first = await refresh(user.refreshToken);
        assert.equal(first.statusCode, 200);
        const current: string = first.json().refreshToken; // user.refreshToken is now rotated

        const rotations = Array.from({ length: 4 }, () => refresh(current));
        const revocations = revoker === 'logout'
          ? [logout(current), logout(current)]
          : [refresh(user.refreshToken), refresh(user.refreshToken)];
        const results = await Promise.all([...rotations, ...revocations]);

        const issued = results.filter((r) => r.statusCode === 200).map((r) => r.json().refreshToken as string);
        assert.ok(issued.length <= 1, `one rotation of a token at most (round ${round})`);
        assert.equal(await liveTokensOfFamily(user.refreshToken), 0, `round ${round}: a token of the revoked family is still live`);
        for (const token of [user.refreshToken, current, ...issued]) {
          assert.equal((await refresh(token)).statusCode, 401, `round ${round}`);
        }
      }
    });
  }
});
