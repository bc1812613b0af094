import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import type { RegExpEngine } from 'ajv/dist/types';
import { compileRegex, MAX_PROGRAM_SIZE, searchRegex } from './re2-cache';

/**
 * JSON Schemas written by accounts: a custom tool's `parameters`, the schema of the arguments a model
 * passes it. Checked on write (a schema Ajv cannot compile is refused, naming why) and used
 * to check a model's arguments before the tool is called. Ajv (draft-07) with:
 * - `pattern` matched by RE2 (re2js, linear time; re2-cache.ts): a tenant's pattern can't stall the worker every
 *   account shares; a pattern RE2 can't compile (lookaround, backreferences) or too large is refused;
 *   a string longer than RE2 can match in bounded time (see re2-cache.ts) fails the pattern;
 * - `format` an annotation only (not checked: no format list to keep in step with providers');
 * - no remote `$ref` (Ajv never loads schemas: a `$ref` outside the schema is refused on write).
 */

/** Longest input worth matching against a program of `size` instructions (re2-cache.ts bounds its inputs the same way). */
const maxInputFor = (size: number) => Math.floor(262_144 / Math.max(size, 1));

const re2Engine: RegExpEngine = Object.assign(
  (pattern: string) => {
    const compiled = compileRegex(pattern);
    if (!compiled.ok) throw new Error(`pattern ${JSON.stringify(pattern)}: ${compiled.message}`);
    const { programSize } = compiled;
    return { test: (s: string) => s.length <= maxInputFor(programSize) && searchRegex(pattern, s) };
  },
  { code: 're2' },
);

const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: false, code: { regExp: re2Engine } });

/** Schemas of at most this many bytes are compiled (a tool's config is bounded anyway; this keeps compiles cheap). */
export const MAX_SCHEMA_BYTES = 32 * 1024;

export type CompiledSchema = { ok: true; validate: ValidateFunction } | { ok: false; message: string };

/**
 * The last COMPILED_KEPT schemas compiled (by their JSON text), most recently used last: a model run
 * checks each tool call's arguments against its tool's schema, and compiling one costs milliseconds
 * (Ajv generates and compiles code) where checking costs microseconds. Bounded: Ajv's own cache would
 * keep one per tool version without end, so compiled schemas are removed from it (below).
 */
const COMPILED_KEPT = 200;
const compiled = new Map<string, CompiledSchema>();

/** The schema compiled, or why it is refused; never throws. */
export function compileJsonSchema(schema: unknown): CompiledSchema {
  const text = JSON.stringify(schema) ?? '';
  if (Buffer.byteLength(text, 'utf8') > MAX_SCHEMA_BYTES) {
    return { ok: false, message: `must be at most ${MAX_SCHEMA_BYTES / 1024} KiB` };
  }
  const kept = compiled.get(text);
  if (kept) {
    compiled.delete(text);
    compiled.set(text, kept);
    return kept;
  }
  let result: CompiledSchema;
  try {
    result = { ok: true, validate: ajv.compile(schema as object) };
  } catch (err) {
    result = { ok: false, message: `is not a valid JSON Schema: ${(err as Error).message}` };
  } finally {
    ajv.removeSchema(schema as object);
  }
  compiled.set(text, result);
  if (compiled.size > COMPILED_KEPT) compiled.delete(compiled.keys().next().value!);
  return result;
}

/**
 * Why a function's parameters schema is refused, or null: it must compile, and describe an object
 * (providers take an object of arguments: `type: "object"`, as OpenAI requires).
 */
export function parametersProblem(schema: unknown): string | null {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return 'must be a JSON Schema object';
  if ((schema as { type?: unknown }).type !== 'object') return 'must describe an object: { "type": "object", "properties": { … } }';
  const compiled = compileJsonSchema(schema);
  return compiled.ok ? null : compiled.message;
}

/** Ajv's first error as one line: `/city: must be string`. */
export function describeSchemaErrors(errors: ErrorObject[] | null | undefined): string {
  const first = errors?.[0];
  if (!first) return 'does not match the schema';
  const extra = first.keyword === 'additionalProperties' ? ` (${JSON.stringify((first.params as { additionalProperty: string }).additionalProperty)})` : '';
  return `${first.instancePath || '(the arguments)'}: ${first.message ?? 'is invalid'}${extra}`;
}

export { MAX_PROGRAM_SIZE };
