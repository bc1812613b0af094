import fastJson from 'fast-json-stringify';
import type { FastifySerializerCompiler } from 'fastify/types/schema';
import { serializerCompiler as zodSerializerCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';

/**
 * Responses are serialized by fast-json-stringify compiled from each route's zod response schema
 * (converted to JSON Schema once, at start-up): only declared fields leave the server, as with zod's
 * own serializer, at a fraction of the cost per response (bench/: ~10 µs → ~1 µs for an agent).
 * A schema that JSON Schema cannot express falls back to zod's serializer.
 */
export const responseSerializerCompiler: FastifySerializerCompiler<z.ZodType> = (route) => {
  try {
    const { $schema: _draft, ...jsonSchema } = z.toJSONSchema(route.schema, { io: 'output', target: 'draft-7', reused: 'inline' }) as Record<string, unknown>;
    return fastJson(jsonSchema as unknown as Parameters<typeof fastJson>[0]) as (data: unknown) => string;
  } catch {
    // e.g. z.undefined() for 204: nothing is sent anyway.
    return zodSerializerCompiler(route as never) as (data: unknown) => string;
  }
};
