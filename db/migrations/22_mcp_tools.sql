-- Tool type `mcp` (docs/api.md § MCP): an MCP server's functions, offered to a model run. The type's check
-- widens; added NOT VALID and validated after, so the table is not locked against writes while its rows
-- are checked (every stored type is among the new ones).
ALTER TABLE tools DROP CONSTRAINT tools_type_check;
ALTER TABLE tools ADD CONSTRAINT tools_type_check CHECK (type IN ('dex_pairs', 'prediction_markets', 'coin_prices', 'custom', 'mcp')) NOT VALID;
ALTER TABLE tools VALIDATE CONSTRAINT tools_type_check;
