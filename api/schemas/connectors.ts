import { z } from 'zod';
import { jsonObject, maxJsonBytes, timestamp } from './common';
import { documentedAs, typedUpdateDocumentation } from './documentation';

export const CONNECTOR_TYPES = ['discord', 'slack', 'telegram'] as const;
export type ConnectorType = (typeof CONNECTOR_TYPES)[number];

const secret = (what: string) =>
  z.string().min(1).max(500).describe(`${what}. Secret: stored encrypted, shown in full only in the response of the request that set it, ` +
    'masked ("••••" + last 4) afterwards; sending the masked value back keeps it unchanged.');

const discordConfig = z
  .strictObject({ botToken: secret('Discord bot token'), guildId: z.string().min(1).max(100) })
  .meta({ id: 'DiscordConnectorConfig' });
const slackConfig = z
  .strictObject({ botToken: secret('Slack bot token (xoxb-…)'), signingSecret: secret('Slack signing secret'), teamId: z.string().min(1).max(100) })
  .meta({ id: 'SlackConnectorConfig' });
const telegramConfig = z.strictObject({ botToken: secret('Telegram bot token') }).meta({ id: 'TelegramConnectorConfig' });

/** The configJson schema of each type; also validates the merged config of an update. */
export const connectorConfigSchemas = { discord: discordConfig, slack: slackConfig, telegram: telegramConfig } satisfies Record<ConnectorType, z.ZodType>;

const name = z.string().trim().min(1).max(200);
const enabled = z.boolean().describe('Default true');

/** A body that creates a connector of each type (the create's examples in the OpenAPI document). */
const CREATE_EXAMPLES: Record<ConnectorType, Record<string, unknown>> = {
  discord: { type: 'discord', name: 'Support server', configJson: { botToken: 'replace-with-the-bot-token', guildId: '1234567890123456789' } },
  slack: {
    type: 'slack', name: 'Team workspace', configJson: { botToken: 'xoxb-replace-with-the-bot-token', signingSecret: 'replace-with-the-signing-secret', teamId: 'T0123456789' },
  },
  telegram: { type: 'telegram', name: 'Alerts bot', configJson: { botToken: '123456789:replace-with-the-bot-token' } },
};

const createOf = <T extends ConnectorType>(type: T) =>
  z
    .strictObject({ type: z.literal(type), name, configJson: connectorConfigSchemas[type], enabled: enabled.optional() })
    .meta({ title: type, examples: [CREATE_EXAMPLES[type]] });

/** A union on `type`, so each type's config is documented and an error names the config field that is wrong. */
export const createConnectorBody = z
  .discriminatedUnion('type', [createOf('discord'), createOf('slack'), createOf('telegram')], {
    error: (issue) => (issue.code === 'invalid_union' ? `must be one of ${CONNECTOR_TYPES.join(', ')}` : undefined),
  })
  .meta({ id: 'CreateConnector' });
export type CreateConnectorInput = z.infer<typeof createConnectorBody>;

// configJson is validated by the service once merged onto the stored config, whose type the route cannot know.
export const updateConnectorBody = documentedAs(
  z
    .strictObject({
      type: z.enum(CONNECTOR_TYPES).describe('Changing the type needs configJson, which then replaces the config'),
      name,
      configJson: maxJsonBytes(jsonObject, 65_536).describe(
        'A JSON merge patch (RFC 7386) onto the current config (null removes a key), unless type changes: then the whole new config',
      ),
      enabled,
    })
    .partial(),
  typedUpdateDocumentation({
    types: CONNECTOR_TYPES,
    configOf: (type) => connectorConfigSchemas[type],
    fields: { name: name.optional(), enabled: enabled.optional() },
    examples: {
      discord: { configJson: { guildId: '9876543210987654321' } },
      slack: { name: 'Sales workspace', configJson: { teamId: 'T9876543210' } },
      telegram: { configJson: { botToken: '987654321:replace-with-the-new-bot-token' } },
    },
    sameTypeExample: { name: 'Renamed' },
  }).meta({ id: 'UpdateConnector', description: 'Any subset of the writable fields; with type, configJson follows it' }),
);


export const connectorSchema = z
  .object({
    id: z.uuid(),
    accountId: z.uuid(),
    agentId: z.uuid(),
    type: z.enum(CONNECTOR_TYPES),
    name: z.string(),
    configJson: jsonObject.describe('The config of the type (DiscordConnectorConfig, SlackConnectorConfig, TelegramConnectorConfig), secrets masked'),
    enabled: z.boolean(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Connector' });
