import { fetchEventSource } from '@microsoft/fetch-event-source';
import { useEffect, useState } from 'react';
import { ApiError } from '../../api/errors';
import type { Schemas } from '../../api/client';
import { ensureFreshToken, refreshSession } from '../../session/session';
import { LiveText, type Draft, type TextDelta } from './live-text';
import type { Run } from './run-status';

export type RunStep = Schemas['RunStep'];
export type Approval = Schemas['Approval'];

class Retry extends Error {}
/** A stream refused for want of room is asked for again after its Retry-After, and never sooner than this. */
const MIN_REOPEN_SECONDS = 5;
class Stop extends Error {}

/**
 * Follows a run live over GET /api/runs/:id/events (Server-Sent Events, with the Authorization and
 * Account-Id headers EventSource cannot send): a model step's text as it arrives (`delta`s, into `liveText`;
 * `draft` says which step it is, null when none), each step as it finishes, `waiting` with each approval the run
 * waits for (`waiting`: those whose approval step has not finished yet), then `done` with the run.
 * Reconnects after a dropped connection with Last-Event-ID (the library keeps it), refreshes an expired
 * token once, and stops on a refusal (its message is the error) or when the run is done. A stream refused
 * for want of room (429: the user's or the account's streams; 503: the API process is full) is the error
 * while the page polls instead, and is asked for again after its Retry-After (at least 5 s): once one
 * opens, the error clears and the steps come live again.
 */
export function useRunEvents(runId: string, accountId: string) {
  const [steps, setSteps] = useState<RunStep[]>([]);
  const [run, setRun] = useState<Run | null>(null);
  const [waiting, setWaiting] = useState<Approval[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [live, setLive] = useState(false);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [liveText, setLiveText] = useState(() => new LiveText(setDraft));

  useEffect(() => {
    const controller = new AbortController();
    // Each run its own text: nothing of the run shown before carries over.
    const text = new LiveText(setDraft);
    setLiveText(text);
    setDraft(null);
    setSteps([]);
    setRun(null);
    setWaiting([]);
    setError(null);
    let token: string | null = null;
    let again: ReturnType<typeof setTimeout> | undefined;
    const open = async () => {
      token = await ensureFreshToken();
      await fetchEventSource(`/api/runs/${encodeURIComponent(runId)}/events`, {
        signal: controller.signal,
        openWhenHidden: true,
        // The library reads headers once per connection: a reconnect after a refresh sends the new token.
        headers: { Authorization: `Bearer ${token ?? ''}`, 'Account-Id': accountId },
        async onopen(response) {
          if (response.ok && response.headers.get('content-type')?.startsWith('text/event-stream')) {
            setLive(true);
            setError(null);
            return;
          }
          const body = (await response.json().catch(() => null)) as { message?: string } | null;
          if (response.status === 401 && (await refreshSession())) throw new Retry();
          throw new Stop(body?.message ?? `The server answered ${response.status}`, { cause: new ApiError(response.status, body?.message ?? `The server answered ${response.status}`, Number(response.headers.get('Retry-After')) || undefined) });
        },
        onmessage(message) {
          if (message.event === 'delta') {
            text.add(JSON.parse(message.data) as TextDelta);
          } else if (message.event === 'step') {
            const step = JSON.parse(message.data) as RunStep;
            // The stored step replaces the text that was growing.
            text.stepDone(step.index);
            setSteps((current) => (current.some((s) => s.index === step.index) ? current : [...current, step].sort((a, b) => a.index - b.index)));
            // Its approval step finished: the approval was decided (or expired) and the run went on.
            if (step.approvalId) setWaiting((current) => current.filter((a) => a.id !== step.approvalId));
          } else if (message.event === 'waiting') {
            const approval = JSON.parse(message.data) as Approval;
            setWaiting((current) => (current.some((a) => a.id === approval.id) ? current : [...current, approval]));
          } else if (message.event === 'done') {
            setRun(JSON.parse(message.data) as Run);
            text.clear();
            setWaiting([]);
            setLive(false);
            controller.abort();
          }
        },
        onclose() {
          // The server ends the stream after done; any other end is a dropped connection: reconnect.
          if (!controller.signal.aborted) throw new Retry();
        },
        onerror(err) {
          // A refusal ends it; a closed stream or a refreshed token starts a new connection (with the token as it now is).
          if (err instanceof Stop || err instanceof Retry) throw err;
          // A dropped connection: the library tries again in a second, resuming after the last step it got.
          return 1000;
        },
      });
    };
    const start = (): void => {
      open().catch((err: unknown) => {
        if (controller.signal.aborted) return;
        setLive(false);
        // Polled instead: no text grows until a stream opens again.
        if (!(err instanceof Retry)) text.clear();
        if (err instanceof Retry) return void setTimeout(start, 500);
        const cause = err instanceof Stop && err.cause ? err.cause : err;
        setError(cause);
        if (cause instanceof ApiError && (cause.status === 429 || cause.status === 503)) {
          again = setTimeout(start, Math.max(MIN_REOPEN_SECONDS, cause.retryAfter ?? 0) * 1000);
        }
      });
    };
    start();
    return () => {
      clearTimeout(again);
      controller.abort();
    };
  }, [runId, accountId]);

  return { steps, run, waiting, error, live, draft, liveText };
}
