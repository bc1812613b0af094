import type { FastifyInstance } from 'fastify';
import { ValidationError } from '../errors';

/** Deep enough for any real config or graph; shallow enough for recursive code (cloning, merging, validation). */
export const MAX_BODY_DEPTH = 64;

const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const unstorable = (text: string) => text.includes('\u0000') || UNPAIRED_SURROGATE.test(text);

/**
 * What a JSON body may not hold although JSON allows it: nesting deeper than MAX_BODY_DEPTH; strings
 * (values or keys) that Postgres can't store — NUL characters and unpaired surrogates; and the keys of
 * prototype pollution — `__proto__` anywhere, `prototype` inside `constructor` — which plain JSON.parse
 * keeps as harmless own keys but which an assignment such as `out[key] = …` (a merge, Object.assign)
 * would turn into a change of prototype. The parser lets them through (onProtoPoisoning: 'ignore' in
 * app.ts) so that this guard can name where they are. Returns the problem as a "body.<path>: …" message,
 * or null. Iterative, so a hostile body can't overflow the stack.
 */
export function bodyProblem(body: unknown): string | null {
  const stack: { value: unknown; path: string[] }[] = [{ value: body, path: [] }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    const where = ['body', ...path].join('.');
    if (typeof value === 'string') {
      if (unstorable(value)) return `${where}: contains a NUL character or an unpaired surrogate`;
    } else if (value !== null && typeof value === 'object') {
      if (path.length >= MAX_BODY_DEPTH) return `${where}: is nested deeper than ${MAX_BODY_DEPTH} levels`;
      for (const [key, child] of Object.entries(value)) {
        if (unstorable(key)) return `${where}: has a key with a NUL character or an unpaired surrogate`;
        if (key === '__proto__') return `${where}: "__proto__" is not allowed as a key`;
        if (key === 'prototype' && path.at(-1) === 'constructor') return `${where}: "prototype" is not allowed as a key inside "constructor"`;
        stack.push({ value: child, path: [...path, key] });
      }
    }
  }
  return null;
}

/** Runs before schema validation on every route, so no handler, validator or database sees such a body. */
export function guardBodies(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => {
    const problem = request.body === undefined ? null : bodyProblem(request.body);
    done(problem ? new ValidationError(problem) : undefined);
  });
}
