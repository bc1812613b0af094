import { sendOutbound, type OutboundRequest } from '../../../lib/outbound-http';

/** A tool's response body is read up to this size (it ends up in the run output and in agent.completed). */
export const MAX_TOOL_RESPONSE_BYTES = 256 * 1024;

/** Thrown for an answer a tool counts as failed; the message is what the run output records. */
export class ToolError extends Error {}

/** The body as JSON when it parses, else the text itself. */
export function parseBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * One tool request through sendOutbound (SSRF guard, time limit). A non-2xx answer is a ToolError
 * naming the status and the start of the body; refused targets, DNS, connection errors and timeouts
 * arrive as OutboundError (also fit to record).
 */
export async function toolRequest(req: Omit<OutboundRequest, 'maxResponseBytes'>): Promise<unknown> {
  const res = await sendOutbound({ ...req, maxResponseBytes: MAX_TOOL_RESPONSE_BYTES });
  if (res.status < 200 || res.status > 299) {
    const snippet = res.body.slice(0, 200);
    throw new ToolError(`HTTP ${res.status}${snippet ? `: ${snippet}` : ''}`);
  }
  return parseBody(res.body);
}
