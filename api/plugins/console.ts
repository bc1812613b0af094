import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** The folder holding package.json, whether this file runs from source or from dist/. */
function packageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return from;
  }
}

/** Where `npm run build:web` puts the console (web/vite.config.ts). */
export const CONSOLE_DIR = path.join(packageRoot(__dirname), 'web', 'dist');

/** What web/vite.config.ts's `html.cspNonce` writes into index.html, replaced by each response's own nonce. */
export const NONCE_PLACEHOLDER = '__AP_CSP_NONCE__';

/**
 * The console's pages may load only what this origin serves; inline script never (its index.html has none),
 * inline style only with the page's nonce (Mantine's CSS variables, given it through the csp-nonce meta).
 */
function consolePolicy(nonce: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** A GET (or HEAD) outside /api from a browser that wants a page: every console URL is the same page. */
function wantsPage(request: FastifyRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const pathname = request.url.split('?')[0]!;
  if (pathname === '/api' || pathname.startsWith('/api/') || pathname === '/metrics') return false;
  return (request.headers.accept ?? '').includes('text/html');
}

/** Answers a request no route matched with the console's page, when it asks for one; false otherwise. */
export type PageFallback = (request: FastifyRequest, reply: FastifyReply) => boolean;

export interface ConsoleSite {
  fallback: PageFallback;
  /** Registers the built files (hashed assets cached for a year, the rest revalidated). */
  register(app: FastifyInstance): Promise<void>;
}

/**
 * The console built into `dir` (README § The console, docs/console.md § Serving). Without a build, a
 * page request is answered with a 404 saying how to make one; the API is the same either way.
 */
export function loadConsole(dir: string = CONSOLE_DIR): ConsoleSite {
  const indexFile = path.join(dir, 'index.html');
  const page = fs.existsSync(indexFile) ? fs.readFileSync(indexFile, 'utf8') : null;
  return {
    fallback(request, reply) {
      if (!wantsPage(request)) return false;
      if (page === null) {
        void reply.code(404).send({ message: 'The console is not built: `npm run build:web` builds it (npm start does when needed)' });
        return true;
      }
      const nonce = randomBytes(16).toString('base64');
      void reply
        .code(200)
        .header('Content-Type', 'text/html; charset=utf-8')
        .header('Cache-Control', 'no-cache')
        .header('Content-Security-Policy', consolePolicy(nonce))
        .send(page.replaceAll(NONCE_PLACEHOLDER, nonce));
      return true;
    },
    async register(app) {
      if (page === null) return;
      await app.register(fastifyStatic, {
        root: dir,
        prefix: '/',
        // One route per built file (no wildcard route): an unknown path stays a 404, or the console's page.
        wildcard: false,
        index: false,
        globIgnore: ['index.html'],
        decorateReply: false,
        cacheControl: false,
        setHeaders(res, filePath) {
          const hashed = filePath.startsWith(path.join(dir, 'assets') + path.sep);
          res.setHeader('Cache-Control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
        },
      });
    },
  };
}
