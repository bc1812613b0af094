import type { ToolsRepository } from '../../db/repositories/tools';
import type { Config } from '../../lib/config';
import { McpFailure } from '../../lib/mcp/client';
import { allowedFunctions, createFunctionLists, type McpToolConfig } from '../../lib/mcp/functions';
import { openConfig } from '../../lib/secret-config';
import { toolSecretPaths } from '../../lib/secret-paths';
import type { SecretBox } from '../../lib/secrets';
import { offerTools } from '../../engine';
import { BadGatewayError, NotFoundError, TooManyRequestsError } from '../errors';
import type { Caller } from './access';

/** One function a tool offers a model (GET /api/tools/:id/functions). */
export interface ToolFunction {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** Listings of MCP servers one account may have waiting at once in a process (each holds a socket up to TOOL_TIMEOUT_MS). */
export const LISTINGS_PER_ACCOUNT = 8;
/** The listings in flight end within TOOL_TIMEOUT_MS; a refused one may ask again after about this long. */
const BUSY_RETRY_AFTER_SECONDS = 5;

/**
 * `GET /api/tools/:id/functions` (docs/api.md § MCP tools): what a tool offers a model. For an `mcp` tool, what its
 * server lists (every page) within the allow-list, kept per tool for MCP_LIST_TTL; the server is asked with
 * no database connection held, its name looked up in the account's share (lib/network.ts), and at most
 * LISTINGS_PER_ACCOUNT of one account's requests wait on servers at once (429 beyond). A server that can't
 * be reached, refuses to initialize, answers a protocol error, does not answer within TOOL_TIMEOUT_MS or
 * answers more than 1 MiB: 502 saying which. For the other types, the one function a model run offers.
 */
export function createToolFunctionService(deps: { tools: ToolsRepository; secrets: SecretBox; config: Pick<Config, 'tools' | 'webhooks' | 'network'> }) {
  const { config } = deps;
  const lists = createFunctionLists(() => config.tools.mcpListTtl.ms);
  const waiting = new Map<string, number>();

  function takeTurn(accountId: string): () => void {
    const mine = waiting.get(accountId) ?? 0;
    if (mine >= LISTINGS_PER_ACCOUNT) {
      throw new TooManyRequestsError(
        `this account has ${LISTINGS_PER_ACCOUNT} requests waiting on MCP servers, the most it may; try again in a few seconds`,
        BUSY_RETRY_AFTER_SECONDS,
      );
    }
    waiting.set(accountId, mine + 1);
    return () => {
      const left = (waiting.get(accountId) ?? 1) - 1;
      if (left === 0) waiting.delete(accountId);
      else waiting.set(accountId, left);
    };
  }

  return {
    async list(caller: Caller, id: string): Promise<ToolFunction[]> {
      const row = await deps.tools.findById(caller.accountId, id);
      if (!row) throw new NotFoundError('Tool');
      if (row.type !== 'mcp') {
        const [offered] = offerTools([row]);
        return [{ name: offered!.name, description: offered!.description, inputSchema: offered!.parameters }];
      }
      const server = openConfig(row.config_json, toolSecretPaths(row.type, row.config_json), deps.secrets) as unknown as McpToolConfig;
      const release = takeTurn(caller.accountId);
      try {
        const listed = await lists.list(row.id, server, {
          timeoutMs: config.tools.timeoutMs,
          allowPrivate: config.webhooks.allowPrivateTargets,
          dnsServers: config.network.dnsServers,
          accountId: caller.accountId,
        });
        return allowedFunctions(listed, server).map((f) => ({ name: f.name, description: f.description, inputSchema: f.inputSchema }));
      } catch (err) {
        if (!(err instanceof McpFailure)) throw err;
        if (err.kind === 'busy') throw new TooManyRequestsError(err.message, BUSY_RETRY_AFTER_SECONDS);
        throw new BadGatewayError(err.message);
      } finally {
        release();
      }
    },
  };
}
export type ToolFunctionService = ReturnType<typeof createToolFunctionService>;
