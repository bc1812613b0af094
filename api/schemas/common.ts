import { z } from 'zod';

export const errorSchema = z.object({ message: z.string() }).meta({ id: 'Error' });

const errorResponses = new WeakSet<z.ZodType>([errorSchema]);

/**
 * An error response of a route, described by when the route gives it ("configJson.webhookPath is
 * already in use"). The statuses every route shares (400 for bad input, 401, 404 for ids, 413, 415,
 * Idempotency-Key's 409 and 422) are added and described by the docs plugin (plugins/docs.ts).
 */
/** The 429 of a request whose URLs are checked (docs/api.md § URL checks). */
export const URL_LOOKUPS_BUSY =
  'The account has 16 URL lookups in flight (or the server has had its 128 taken for 3 s), the most it may: retry after Retry-After seconds. A name that does not resolve within 3 s is a 400 naming the field (and again at once for a minute).';

export function errorResponse(when?: string): z.ZodType {
  const response = when ? errorSchema.describe(when) : errorSchema;
  errorResponses.add(response);
  return response;
}

/** Whether a response schema is an error's `{ message }` (errorSchema or an errorResponse). */
export const isErrorResponse = (schema: unknown): boolean => errorResponses.has(schema as z.ZodType);

/**
 * An email address as SMTP can carry it (RFC 5321: at most 64 characters before the @ and 254 in all);
 * the pattern alone would accept any length. Register and team invites share it.
 */
export const emailAddress = z
  .email()
  .max(254, { error: 'must be at most 254 characters' })
  .refine((v) => v.lastIndexOf('@') <= 64, { error: 'must have at most 64 characters before the @' })
  .describe('At most 64 characters before the @, 254 in all');

export const timestamp = z.string().meta({ format: 'date-time', example: '2026-01-01T00:00:00.000Z' });

/** A path id. A malformed one answers 404 (the error handler maps failed params validation to 404). */
export const idParams = z.object({ id: z.uuid() });

/** The parent agent of a sub-collection (connectors, tools, agent triggers). */
export const agentIdParams = z.object({ agentId: z.uuid() });

/**
 * A list cursor: opaque, but always what the API makes (base64url of a JSON array, so it begins with "W"), or empty
 * (the first page). One the API did not make is refused with the same words whether the pattern or the decoder finds it.
 */
export const CURSOR_SHAPE = /^(?:W[A-Za-z0-9_-]*)?$/;
export const cursorParameter = (max: number) =>
  z.string().max(max).regex(CURSOR_SHAPE, 'is not a valid cursor').optional().describe("Opaque cursor from the previous page's Link header");

export const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50).describe('Page size, 1–200'),
  cursor: cursorParameter(500),
});
export type ListQuery = z.infer<typeof listQuery>;

export const noContent = z.undefined().describe('No content');

export const jsonObject = z.record(z.string(), z.unknown());

/** Limits the serialized size of a JSON value. */
export function maxJsonBytes<T extends z.ZodType>(schema: T, bytes: number) {
  return schema.refine((v) => Buffer.byteLength(JSON.stringify(v) ?? '', 'utf8') <= bytes, {
    message: `must be at most ${bytes / 1024} KiB when serialized`,
  });
}
