import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { onCleanup, type Cleanup } from './cleanup';
import { freePort } from './processes';

/**
 * MCP servers on loopback for the client side's tests: the reference `@modelcontextprotocol/server-everything`
 * (no one here wrote it) in its Streamable HTTP mode, servers of our own built on the SDK's Server where a test
 * needs what the reference can't do (pages, counting calls), and raw HTTP servers that misbehave (hang, send
 * 50 MB).
 */

const EVERYTHING = path.resolve(__dirname, '../../node_modules/@modelcontextprotocol/server-everything/dist/index.js');

export interface RunningMcpServer {
  /** The Streamable HTTP endpoint: http://127.0.0.1:<port>/mcp. */
  url: string;
  port: number;
  /** Stops it now (a test of a server that went away). */
  stop: () => Promise<void>;
}

/**
 * `node …/server-everything/dist/index.js streamableHttp` with PORT (how its README starts it), as its own
 * process; ready once it says it listens. (It binds every interface: the tests reach it on 127.0.0.1.)
 */
export async function startEverythingServer(t: Cleanup): Promise<RunningMcpServer> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
    let output = '';
    const ready = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 20_000);
      child.stderr!.on('data', (d) => {
        output += d;
        if (output.includes('listening on port')) {
          clearTimeout(timer);
          resolve(true);
        }
      });
      child.on('exit', () => {
        clearTimeout(timer);
        resolve(false);
      });
    });
    const stop = async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    };
    if (ready) {
      onCleanup(t, stop);
      return { url: `http://127.0.0.1:${port}/mcp`, port, stop };
    }
    await stop();
    // Another process took the port between the look and the start: once more, on another.
    if (attempt >= 3 || !output.includes('EADDRINUSE') && !output.includes('already in use')) throw new Error(`server-everything did not start:\n${output}`);
  }
}

/** A loopback HTTP server answering every request with `handle`; closed when `t` ends. */
export async function startHttpServer(t: Cleanup, handle: http.RequestListener): Promise<{ url: string; server: http.Server; stop: () => Promise<void> }> {
  const server = http.createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const stop = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  onCleanup(t, stop);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, server, stop };
}

/**
 * An MCP server of our own on the SDK's Server (low-level: the test sets its request handlers), stateless
 * Streamable HTTP, answering in JSON; `calls` counts the requests by JSON-RPC method.
 */
export async function startOwnMcpServer(t: Cleanup, setUp: (server: Server) => void): Promise<{ url: string; calls: Map<string, number>; stop: () => Promise<void> }> {
  const calls = new Map<string, number>();
  const started = await startHttpServer(t, (req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', async () => {
      const parsed = body ? JSON.parse(body) : undefined;
      for (const message of [parsed].flat()) if (message?.method) calls.set(message.method, (calls.get(message.method) ?? 0) + 1);
      const server = new Server({ name: 'own', version: '1.0.0' }, { capabilities: { tools: {} } });
      setUp(server);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => void server.close());
      await server.connect(transport);
      await transport.handleRequest(req, res, parsed);
    });
  });
  return { url: started.url, calls, stop: started.stop };
}
