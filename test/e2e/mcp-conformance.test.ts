import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { registerUser, startTestApp, type TestApp } from '../helpers/app';
import { onCleanup, suiteContext } from '../helpers/cleanup';

const run = promisify(execFile);
const CONFORMANCE = path.resolve(__dirname, '../../node_modules/@modelcontextprotocol/conformance/dist/index.js');
/** The scenarios of the conformance suite that apply to a tools-only server (docs/api.md § MCP server). */
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];
/** The conformance tool runs on Node 22 or later. */
const MIN_NODE = 22;

/**
 * `@modelcontextprotocol/conformance server` (written by the MCP project, not us) against `POST /api/mcp`
 * of the real API on loopback. The suite's client sends no credential, so it talks to the API through a
 * loopback proxy that adds the Bearer token to each request and changes nothing else (Host and Origin go
 * through as the suite sent them: its DNS rebinding scenario reaches our check). The tool runs on the
 * Node that runs the tests (CI's; MCP_CONFORMANCE_NODE names another), which must be 22 or later: an older
 * one fails this test, saying so.
 */
describe('MCP conformance suite (server scenarios)', () => {
  const suite = suiteContext();
  let app: TestApp;
  let url: string;
  let node: string;

  before(async () => {
    node = process.env.MCP_CONFORMANCE_NODE ?? process.execPath;
    const version = node === process.execPath ? process.versions.node : (await run(node, ['--version'])).stdout.trim().replace(/^v/, '');
    const major = Number(version.split('.')[0]);
    assert.ok(
      major >= MIN_NODE,
      `@modelcontextprotocol/conformance needs Node ${MIN_NODE} or later; ${node} is Node ${version}. ` +
        'Run the tests with Node 24 (.nvmrc), or set MCP_CONFORMANCE_NODE to a Node 22+ binary for this test.',
    );

    ({ app } = await startTestApp(suite));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const apiPort = (app.server.address() as AddressInfo).port;
    const user = await registerUser(app);
    const key = (await app.inject({ method: 'POST', url: '/api/auth/api-keys', headers: user.auth, payload: { name: 'conformance' } })).json().key as string;

    const proxy = http.createServer((req, res) => {
      const upstream = http.request(
        { host: '127.0.0.1', port: apiPort, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${key}` } },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    onCleanup(suite, () => {
      proxy.closeAllConnections();
      return new Promise((resolve) => proxy.close(resolve));
    });
    url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/api/mcp`;
  });

  for (const scenario of SCENARIOS) {
    it(`passes ${scenario}`, async () => {
      const result = await run(node, [CONFORMANCE, 'server', '--url', url, '--scenario', scenario, '--verbose'], { timeout: 60_000 }).then(
        (r) => ({ code: 0, out: r.stdout + r.stderr }),
        (err: { code?: number; stdout?: string; stderr?: string }) => ({ code: err.code ?? -1, out: `${err.stdout ?? ''}${err.stderr ?? ''}` }),
      );
      assert.equal(result.code, 0, `conformance ${scenario} failed:\n${result.out}`);
      assert.match(result.out, /"status": "SUCCESS"/, result.out);
      assert.doesNotMatch(result.out, /"status": "FAILURE"/, result.out);
    });
  }
});
