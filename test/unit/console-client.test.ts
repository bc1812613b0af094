import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { CLIENT_TYPES_FILE, generateClientTypes } from '../../scripts/gen-api';

/**
 * The console's typed client is generated from the API's OpenAPI document (`npm run gen:api`); a change to
 * the API's schemas that is not regenerated would leave the console typed against an API that no longer is.
 */
describe('the console client (web/src/api/schema.d.ts)', () => {
  it('is what `npm run gen:api` makes from the API as it is now', async () => {
    const committed = fs.readFileSync(CLIENT_TYPES_FILE, 'utf8');
    const fresh = await generateClientTypes();
    if (committed !== fresh) {
      const a = committed.split('\n');
      const b = fresh.split('\n');
      const line = a.findIndex((text, i) => text !== b[i]);
      assert.fail(`web/src/api/schema.d.ts is out of date (first difference at line ${line + 1}: ${JSON.stringify(a[line])} → ${JSON.stringify(b[line])}); run \`npm run gen:api\``);
    }
  });
});
