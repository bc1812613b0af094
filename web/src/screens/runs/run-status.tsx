import { Badge } from '@mantine/core';
import type { Schemas } from '../../api/client';

export type Run = Schemas['Run'];
export type RunStatus = Run['status'];
export const RUN_STATUSES: readonly RunStatus[] = ['queued', 'running', 'waiting', 'succeeded', 'failed'];
const COLORS: Record<RunStatus, string> = { queued: 'gray', running: 'blue', waiting: 'orange', succeeded: 'teal', failed: 'red' };

/** The error of a run ended by POST /api/runs/:id/cancel (docs/api.md § Agent runs: a cancelled run is a failed run that says so). */
export const CANCELLED_ERROR = 'the run was cancelled';

export const isFinished = (status: RunStatus) => status === 'succeeded' || status === 'failed';

/** A run's status as a badge whose text is the status itself (tests read it). */
export function RunStatusBadge({ status }: { status: RunStatus }) {
  return (
    <Badge variant="light" color={COLORS[status]}>
      {status}
    </Badge>
  );
}

/** Tokens and tool calls of a run: its own `usage` when the API reports one, else what its output says. */
export function usageOf(run: Run): { promptTokens?: number; completionTokens?: number; toolCalls?: number } | null {
  const own = (run as { usage?: unknown }).usage;
  const fromOutput = (run.output as { usage?: unknown } | null)?.usage;
  const usage = own ?? fromOutput;
  return usage && typeof usage === 'object' ? (usage as { promptTokens?: number; completionTokens?: number; toolCalls?: number }) : null;
}
