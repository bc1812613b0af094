import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDatabaseUnavailable } from '../../api/plugins/error-handler';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('a database outage, told from a fault (api/plugins/error-handler.ts)', () => {
  it('is an outage: connection refused or lost, a server shutting down or starting, class 08, a pool connect timed out', () => {
    for (const err of [
      withCode('ECONNREFUSED'),
      withCode('ECONNRESET'),
      withCode('57P01', 'terminating connection due to administrator command'),
      withCode('57P02'),
      withCode('57P03', 'the database system is starting up'),
      withCode('53300', 'sorry, too many clients already'),
      withCode('08006'),
      withCode('08001'),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
      Object.assign(new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')]), { code: undefined }),
      Object.assign(new Error('wrapped'), { cause: withCode('57P01') }),
    ]) {
      assert.equal(isDatabaseUnavailable(err), true, `${(err as { code?: string }).code ?? ''} ${err.message}`);
    }
  });

  it('is a fault: constraint violations, syntax errors, our own bugs', () => {
    for (const err of [withCode('23505', 'duplicate key'), withCode('42601', 'syntax error'), withCode('22P02'), new TypeError('x is undefined'), undefined, null]) {
      assert.equal(isDatabaseUnavailable(err), false, String(err));
    }
  });
});
