import { Validator, type Schema } from '@cfworker/json-schema';
import { useQuery } from '@tanstack/react-query';

/**
 * The API's own request schemas, read from its OpenAPI document (GET /api/openapi.json): forms are generated
 * from them and checked against them before sending, so the console keeps no copy of the API's rules. The
 * validator interprets the schema (no code generation), which the console's Content-Security-Policy needs.
 * The API stays the judge: its 400 names the field (see fieldOfMessage), and a form shows it there too.
 */
export type JsonSchema = {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  format?: string;
  title?: string;
  description?: string;
  default?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  examples?: unknown[];
  $ref?: string;
};

interface OpenApiDocument {
  components: { schemas: Record<string, JsonSchema> };
}

export function useOpenApiDocument() {
  return useQuery({
    queryKey: ['openapi'],
    queryFn: async (): Promise<OpenApiDocument> => {
      const res = await fetch('/api/openapi.json', { credentials: 'same-origin' });
      if (!res.ok) throw new Error(`The API's OpenAPI document could not be read (${res.status})`);
      return (await res.json()) as OpenApiDocument;
    },
    staleTime: Infinity,
    gcTime: Infinity,
  });
}

/** A component schema with every $ref inlined (the document's refs are to #/components/schemas/…, never cyclic here). */
export function resolveSchema(document: OpenApiDocument, schema: JsonSchema, depth = 0): JsonSchema {
  if (depth > 20) return schema;
  if (schema.$ref) {
    const name = schema.$ref.replace('#/components/schemas/', '');
    const target = document.components.schemas[name];
    return target ? resolveSchema(document, target, depth + 1) : {};
  }
  const out: JsonSchema = { ...schema };
  if (schema.properties) out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, resolveSchema(document, v, depth + 1)]));
  if (schema.items) out.items = resolveSchema(document, schema.items, depth + 1);
  if (schema.oneOf) out.oneOf = schema.oneOf.map((s) => resolveSchema(document, s, depth + 1));
  if (schema.anyOf) out.anyOf = schema.anyOf.map((s) => resolveSchema(document, s, depth + 1));
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
    out.additionalProperties = resolveSchema(document, schema.additionalProperties, depth + 1);
  }
  return out;
}

/** The variants of a body that is a union on `type` (tools, connectors, triggers): type → its schema. */
export function variantsByType(schema: JsonSchema): Map<string, JsonSchema> {
  const variants = schema.oneOf ?? schema.anyOf ?? [schema];
  return new Map(variants.flatMap((variant) => {
    const type = variant.properties?.type?.const;
    return typeof type === 'string' ? [[type, variant] as const] : [];
  }));
}

export interface FieldError {
  /** Dotted path of the field (`configJson.endpoint`), '' for the whole body. */
  path: string;
  message: string;
}

/** Checks `value` against `schema` (draft 2020-12, as the document declares): the failing leaves, by field. */
export function validateAgainst(schema: JsonSchema, value: unknown): FieldError[] {
  const result = new Validator(schema as Schema, '2020-12', false).validate(value);
  if (result.valid) return [];
  // The deepest errors say what is wrong; the ones above them only that something below is.
  const errors = result.errors.filter((e) => !['properties', 'allOf', 'anyOf', 'oneOf', '$ref', 'items', 'additionalProperties'].includes(e.keyword) || e.error.includes('does not match'));
  const leaves = errors.length ? errors : result.errors;
  const seen = new Set<string>();
  return leaves.flatMap((e) => {
    const path = e.instanceLocation.replace(/^#\/?/, '').split('/').filter(Boolean).join('.');
    if (seen.has(path)) return [];
    seen.add(path);
    return [{ path, message: e.error }];
  });
}

/**
 * The request schema of a component by name (`CreateTool`), resolved, with its loading state. The document
 * holds a request body's own form as `<name>Input` when it differs from the response's (fields with
 * defaults are optional there): that is the one a form is checked against.
 */
export function useComponentSchema(name: string) {
  const document = useOpenApiDocument();
  const raw = document.data?.components.schemas[`${name}Input`] ?? document.data?.components.schemas[name];
  return { ...document, schema: document.data && raw ? resolveSchema(document.data, raw) : undefined };
}
