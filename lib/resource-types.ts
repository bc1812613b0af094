/** The types of tools, connectors and triggers, as stored and as the API names them (shared by every layer). */
export type ToolType = 'dex_pairs' | 'prediction_markets' | 'coin_prices' | 'custom' | 'mcp';
export type ConnectorType = 'discord' | 'slack' | 'telegram';
export type TriggerKind = 'schedule' | 'cron' | 'webhook' | 'event' | 'agent_finished' | 'agent_output';
