import { z } from 'zod';

/**
 * Request bodies whose OpenAPI schema is not the schema that validates them. A typed config is
 * validated in two steps: the route's schema checks the body's shape with configJson a free-form
 * object, then the service checks configJson against its type's schema, after merging an update's
 * patch onto the stored config (whose type the route cannot know); its errors name
 * `body.configJson.<field>`. The document shows instead what the two steps accept together: a union on
 * `type` with each type's config schema (the very schemas the service validates with). docs.ts swaps
 * it in when it builds the document; validation never sees it.
 */
const documentations = new WeakMap<object, z.ZodType>();

/** Registers how the document shows a body validated by `validated`; returns `validated` unchanged. */
export function documentedAs<T extends z.ZodType>(validated: T, documentation: z.ZodType): T {
  documentations.set(validated, documentation);
  return validated;
}

/** The schema the document shows for a body: its registered documentation, or itself. */
export function documentationOf(schema: unknown): unknown {
  return (schema !== null && typeof schema === 'object' && documentations.get(schema)) || schema;
}

/** Strips the defaults and optionals around a field, down to the schema of its value. */
function valueSchema(field: z.ZodType): z.ZodType {
  let inner = field;
  while (inner instanceof z.ZodDefault || inner instanceof z.ZodOptional) inner = inner.unwrap() as z.ZodType;
  return inner;
}

/**
 * The JSON merge patch (RFC 7386) of a config, as an update's configJson: every field optional (absent
 * leaves it as it is), `null` removes a field that may be absent (one with a default gets it back) and
 * an entry of a map; nested objects are patches too. For the document only: the service validates the
 * merged config with the config's own schema.
 */
export function mergePatchOf(config: z.ZodObject): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const [key, field] of Object.entries(config.shape as Record<string, z.ZodType>)) {
    const value = valueSchema(field);
    let patch = value;
    if (value instanceof z.ZodObject) patch = mergePatchOf(value);
    else if (value instanceof z.ZodRecord) patch = z.record(value.keyType as z.ZodString, (value.valueType as z.ZodType).nullable());
    patch = field.safeParse(undefined).success ? patch.nullable() : patch;
    const description = field.description ?? value.description;
    shape[key] = (description ? patch.describe(description) : patch).optional();
  }
  return z.strictObject(shape);
}

/**
 * How the document shows the update of a resource that has a `type` and a configJson per type (tools,
 * connectors, triggers): one variant per type, whose configJson is a merge patch of that type's config
 * (or, when the type changes, its whole config), and one variant without `type`, whose configJson
 * patches the config of the resource's current type. Each variant has an example.
 */
export function typedUpdateDocumentation<T extends string>(options: {
  types: readonly T[];
  configOf: (type: T) => z.ZodObject;
  /** The other writable fields, each optional. */
  fields: z.ZodRawShape;
  examples: Record<T, Record<string, unknown>>;
  sameTypeExample: Record<string, unknown>;
}) {
  const { types, configOf, fields } = options;
  const typed = types.map((type) =>
    z
      .strictObject({
        type: z.literal(type),
        ...fields,
        configJson: mergePatchOf(configOf(type))
          .optional()
          .describe(
            'Of the same type: a JSON merge patch (RFC 7386) onto the current config (null removes a field; one with a default ' +
              'gets it back). Of another type: the whole config of that type, required (it replaces the config).',
          ),
      })
      .meta({ title: type, examples: [{ type, ...options.examples[type] }] }),
  );
  const sameType = z
    .strictObject({
      ...fields,
      configJson: z
        .union(types.map((type) => mergePatchOf(configOf(type))))
        .optional()
        .describe('A JSON merge patch (RFC 7386) onto the current config, of the current type'),
    })
    .meta({ title: 'same type', examples: [options.sameTypeExample] });
  return z.union([z.discriminatedUnion('type', typed as [(typeof typed)[number], ...typeof typed]), sameType]);
}
