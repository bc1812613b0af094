import { z } from 'zod';
import { parametersProblem } from '../../lib/json-schema';
import { jsonObject, maxJsonBytes, timestamp } from './common';
import { documentedAs, typedUpdateDocumentation } from './documentation';

export const TOOL_TYPES = ['dex_pairs', 'prediction_markets', 'coin_prices', 'custom', 'mcp'] as const;
export type ToolType = (typeof TOOL_TYPES)[number];

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** RFC 9110 token: what an HTTP header name may be made of. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

const ids = (what: string, min: number, max: number) => z.array(z.string().min(1).max(200)).min(min).max(max).describe(what);

const hasNoCredentials = (url: string) => {
  const parsed = URL.parse(url);
  return !parsed || (parsed.username === '' && parsed.password === '');
};

/** A URL a tool calls (a custom tool's endpoint, an MCP tool's server): http(s), without credentials. */
const targetUrl = z
  .url({ protocol: /^https?$/, error: 'must be an absolute http or https URL' })
  .max(2000)
  // Credentials in a URL are shown wherever the URL is; a header holds them as a secret.
  .refine(hasNoCredentials, 'must not contain credentials (user:password@); send them in a header');

const maxEntries = (n: number) => (record: Record<string, unknown>) => Object.keys(record).length <= n;

/**
 * A headers object whose names match `name`. No NUL in the pattern: every body with one is refused before validation
 * (docs/api.md § Conventions), and the fuzzer drops a pattern that names it.
 */
const headersNamed = (name: z.ZodString) =>
  z
    .record(name, z.string().max(8192).regex(/^[^\r\n]*$/, 'must not contain line breaks'), {
      error: (issue) => (issue.code === 'invalid_key' ? 'is not a valid HTTP header name' : undefined),
    })
    .refine(maxEntries(50), 'must have at most 50 entries')
    .refine((h) => new Set(Object.keys(h).map((k) => k.toLowerCase())).size === Object.keys(h).length, 'names the same header twice (names are case-insensitive)');

const headers = headersNamed(z.string().regex(HEADER_NAME)).describe(
  'Request headers. Every value is a secret except those of Content-Type, Accept, Accept-Language and User-Agent (any case): ' +
    'stored encrypted, shown in full only in the response that set them, masked ("••••" + last 4) afterwards, left out of ' +
    'exports; sending the masked value back keeps it unchanged, except when the update changes the endpoint in any part ' +
    '(scheme, host, port, path, query): then each secret header must be sent again in full, or null to remove it (400 otherwise).',
);

const dexPairsConfig = z
  .strictObject({
    chainIds: z.array(z.string().min(1).max(100)).min(1).max(100),
    pairAddresses: ids('Pair addresses; default []', 0, 500).default([]),
  })
  .meta({ id: 'DexPairsToolConfig' });
const predictionMarketsConfig = z
  .strictObject({ marketIds: ids('Market ids', 1, 500) })
  .meta({ id: 'PredictionMarketsToolConfig' });
const coinPricesConfig = z.strictObject({ coinIds: ids('Coin ids', 1, 500) }).meta({ id: 'CoinPricesToolConfig' });
const customConfig = z
  .strictObject({
    endpoint: targetUrl.describe(
      'Absolute http(s) URL without credentials (user:password@ → 400: send them in a header); private, loopback and ' +
        'link-local targets are refused unless ALLOW_PRIVATE_TARGETS, and a name that does not resolve within 3 s is refused. ' +
        'Values of query parameters whose name contains key, token, secret, password, sig or auth (any case) are secrets: ' +
        'masked on read; the URL sent back exactly as read keeps them; an export leaves them out.',
    ),
    method: z.enum(HTTP_METHODS).default('GET'),
    headers: headers.default({}),
    bodyTemplate: z.string().max(65_536).optional(),
    responseMapping: z
      .record(z.string().min(1).max(200), z.string().max(1000))
      .refine(maxEntries(100), 'must have at most 100 entries')
      .optional(),
    parameters: jsonObject
      .superRefine((schema, ctx) => {
        const problem = parametersProblem(schema);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      // What JSON Schema can say of the rule, the document says: an object whose `type` is "object".
      .meta({ required: ['type'], properties: { type: { const: 'object', description: 'Providers take the arguments as one object' } } })
      .optional()
      .describe(
        'A JSON Schema (draft-07) of the arguments a model passes this tool when an agent runs with a language model: ' +
          '{ "type": "object", "properties": { … } }; default { "type": "object" }. The arguments are checked against it ' +
          'before the call and fill bodyTemplate as {{input}} / {{input.a.b}}. `pattern` uses RE2 syntax; `format` is not checked. ' +
          'A schema that does not compile as draft-07 (a keyword of the wrong type, a `pattern` RE2 cannot run, a `$ref` outside ' +
          'it), or one over 32 KiB, is refused: 400 `…parameters: is not a valid JSON Schema: <why>` (or `must be at most 32 KiB`).',
      ),
  })
  .meta({ id: 'CustomToolConfig' });

/** Headers the MCP transport sets itself (a stored one would break the protocol, or hijack its session). */
const MCP_TRANSPORT_HEADERS = new Set(['accept', 'content-type', 'content-length', 'host', 'connection', 'transfer-encoding', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id']);
/** The names above in any case, as a pattern JSON Schema can state (ECMA-262 has no case-insensitive flag inside a pattern). */
const MCP_TRANSPORT_HEADER_PATTERN = `^(?:${[...MCP_TRANSPORT_HEADERS]
  .map((name) => [...name].map((c) => (/[a-z]/.test(c) ? `[${c.toUpperCase()}${c}]` : c)).join(''))
  .join('|')})$`;
/**
 * An MCP tool's header name: a valid one that the transport does not set. The document states the refusal too
 * (`propertyNames.not`), so a name it allows is one a write accepts (test/api/openapi-constraints.test.ts).
 */
const mcpHeaderName = z.string().regex(HEADER_NAME).meta({ not: { pattern: MCP_TRANSPORT_HEADER_PATTERN } });

const mcpConfig = z
  .strictObject({
    url: targetUrl.describe(
      "The MCP server's Streamable HTTP endpoint (e.g. https://mcp.example.com/mcp). Absolute http(s) URL without credentials; " +
        'private, loopback and link-local targets are refused unless ALLOW_PRIVATE_TARGETS, and a name that does not resolve within 3 s ' +
        'is refused (checked again, and the connection pinned to the checked addresses, at every call). Query values whose name ' +
        'contains key, token, secret, password, sig or auth are secrets: masked on read, left out of exports.',
    ),
    headers: headersNamed(mcpHeaderName)
      .refine((h) => !Object.keys(h).some((name) => MCP_TRANSPORT_HEADERS.has(name.toLowerCase())), {
        message: `must not set ${[...MCP_TRANSPORT_HEADERS].join(', ')}: the MCP transport sets them`,
      })
      .default({})
      .describe(
        'Headers sent with every request to the server, usually { "Authorization": "Bearer …" }. Every value is a secret except those of ' +
          'Accept-Language and User-Agent: stored encrypted, shown in full only in the response that set them, masked ("••••" + last 4) ' +
          'afterwards, left out of exports; sending the masked value back keeps it, except when the update changes the url in any part: ' +
          "then each secret header must be sent again in full, or null to remove it (400 otherwise). The transport's own headers " +
          '(Accept, Content-Type, Mcp-Session-Id, Mcp-Protocol-Version, …) may not be set.',
      ),
    functions: z
      .array(z.string().min(1).max(200))
      .min(1)
      .max(500)
      .refine((names) => new Set(names).size === names.length, 'names the same function twice')
      // The document's uniqueItems: a list naming a function twice is refused, and so says the schema.
      .meta({ uniqueItems: true })
      .optional()
      .describe("An allow-list of the server's function (tool) names a model is offered; default: every function the server lists"),
  })
  .meta({ id: 'McpToolConfig' });

/** The configJson schema of each type; also validates the merged config of an update (and fills defaults). */
export const toolConfigSchemas = {
  dex_pairs: dexPairsConfig,
  prediction_markets: predictionMarketsConfig,
  coin_prices: coinPricesConfig,
  custom: customConfig,
  mcp: mcpConfig,
} satisfies Record<ToolType, z.ZodType>;

const name = z.string().trim().min(1).max(200);
const description = z.string().max(2000);
const enabled = z.boolean().describe('Default true');
const requiresApproval = z
  .boolean()
  .describe("Default false. A model run's call of this tool (of any of an mcp tool's functions) waits for a person's decision first (docs/api.md § Approvals)");

/** A body that creates a tool of each type (the create's examples in the OpenAPI document). */
const CREATE_EXAMPLES: Record<ToolType, Record<string, unknown>> = {
  dex_pairs: {
    type: 'dex_pairs', name: 'SOL/USDC', configJson: { chainIds: ['solana'], pairAddresses: ['58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2'] },
  },
  prediction_markets: { type: 'prediction_markets', name: 'Election odds', configJson: { marketIds: ['253591'] } },
  coin_prices: { type: 'coin_prices', name: 'prices', description: 'Spot prices in USD', configJson: { coinIds: ['bitcoin', 'ethereum'] } },
  custom: {
    type: 'custom',
    name: 'CRM lookup',
    description: 'Finds the customer of the input\'s email',
    configJson: {
      endpoint: 'https://crm.example.com/api/customers/search',
      method: 'POST',
      headers: { Authorization: 'Bearer replace-with-your-crm-token', 'Content-Type': 'application/json' },
      bodyTemplate: '{"email": {{input.email}}}',
      responseMapping: { customerId: 'data.id', plan: 'data.plan' },
      parameters: { type: 'object', properties: { email: { type: 'string', description: "The customer's email address" } }, required: ['email'] },
    },
  },
  mcp: {
    type: 'mcp',
    name: 'github',
    description: "GitHub's MCP server: issues and pull requests",
    configJson: {
      url: 'https://api.githubcopilot.com/mcp/',
      headers: { Authorization: 'Bearer replace-with-your-github-token' },
      functions: ['search_issues', 'get_issue'],
    },
  },
};

const createOf = <T extends ToolType>(type: T) =>
  z
    .strictObject({
      type: z.literal(type),
      name,
      description: description.optional().describe('Default ""'),
      configJson: toolConfigSchemas[type],
      enabled: enabled.optional(),
      requiresApproval: requiresApproval.optional(),
    })
    .meta({ title: type, examples: [CREATE_EXAMPLES[type]] });

/** A union on `type`, so each type's config is documented and an error names the config field that is wrong. */
export const createToolBody = z
  .discriminatedUnion('type', [createOf('dex_pairs'), createOf('prediction_markets'), createOf('coin_prices'), createOf('custom'), createOf('mcp')], {
    error: (issue) => (issue.code === 'invalid_union' ? `must be one of ${TOOL_TYPES.join(', ')}` : undefined),
  })
  .meta({ id: 'CreateTool' });
export type CreateToolInput = z.infer<typeof createToolBody>;

// configJson is validated by the service once merged onto the stored config, whose type the route cannot know.
export const updateToolBody = documentedAs(
  z
    .strictObject({
      type: z.enum(TOOL_TYPES).describe('Changing the type needs configJson, which then replaces the config'),
      name,
      description,
      configJson: maxJsonBytes(jsonObject, 131_072).describe(
        'A JSON merge patch (RFC 7386) onto the current config (null removes a key), unless type changes: then the whole new config',
      ),
      enabled,
      requiresApproval,
    })
    .partial(),
  typedUpdateDocumentation({
    types: TOOL_TYPES,
    configOf: (type) => toolConfigSchemas[type],
    fields: { name: name.optional(), description: description.optional(), enabled: enabled.optional(), requiresApproval: requiresApproval.optional() },
    examples: {
      dex_pairs: { configJson: { pairAddresses: ['58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2', 'Czfq3xZZDmsdGdUyrNLtRhGc47cXcZtLG4crryfu44zE'] } },
      prediction_markets: { configJson: { marketIds: ['253591', '253597'] } },
      coin_prices: { name: 'sol price', configJson: { coinIds: ['solana'] } },
      custom: { configJson: { headers: { 'X-Request-Source': 'agent-platform' }, responseMapping: null } },
      mcp: { configJson: { functions: ['search_issues'] } },
    },
    sameTypeExample: { enabled: false },
  }).meta({ id: 'UpdateTool', description: 'Any subset of the writable fields; with type, configJson follows it' }),
);


export const toolSchema = z
  .object({
    id: z.uuid(),
    accountId: z.uuid(),
    agentId: z.uuid(),
    type: z.enum(TOOL_TYPES),
    name: z.string(),
    description: z.string(),
    configJson: jsonObject.describe(
      'The config of the type (DexPairsToolConfig, PredictionMarketsToolConfig, CoinPricesToolConfig, CustomToolConfig, McpToolConfig) with defaults filled, secrets masked',
    ),
    enabled: z.boolean(),
    requiresApproval: z.boolean(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Tool' });

/** GET /api/tools/:id/functions: one function a model is offered. */
export const toolFunctionSchema = z
  .object({
    name: z.string().describe("For an mcp tool, the server's name of the function; for the other types, the function name a model run offers"),
    description: z.string(),
    inputSchema: jsonObject.describe('The JSON Schema of its arguments'),
  })
  .meta({ id: 'ToolFunction' });
