import type { Db } from '../../db/pool';
import { createRunDeltasRepository, MAX_DELTA_TEXT_BYTES } from '../../db/repositories/run-deltas';

/**
 * A model step's text sent on as it arrives (docs/architecture.md § Streaming deltas): each piece the
 * provider streams is told to the API processes by a Postgres notification (db/repositories/run-deltas.ts),
 * never written to a table. One notification of a step is in flight at a time; what arrives meanwhile is
 * sent together in the next, so a fast provider costs a notification per round trip, not per token.
 * A delta that could not be sent is dropped (the step is stored whole at its end all the same).
 */
export interface StepDeltas {
  /** The next piece of the step's text. */
  text(piece: string): void;
  /** Resolves once everything given to `text` was sent (or dropped): called before the step is recorded. */
  flush(): Promise<void>;
}

/** `text` cut into pieces of at most `maxBytes` UTF-8 bytes, never inside a character. */
export function cutText(text: string, maxBytes: number): string[] {
  const pieces: string[] = [];
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < text.length; ) {
    const code = text.codePointAt(i)!;
    const units = code > 0xffff ? 2 : 1;
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    if (bytes + size > maxBytes && i > start) {
      pieces.push(text.slice(start, i));
      start = i;
      bytes = 0;
    }
    bytes += size;
    i += units;
  }
  if (start < text.length) pieces.push(text.slice(start));
  return pieces;
}

export function createRunDeltas(db: Db, log: (msg: string, err: unknown) => void = () => {}) {
  const deltas = createRunDeltasRepository(db);
  return {
    forStep(runId: string, stepIndex: number): StepDeltas {
      let pending = '';
      let offset = 0;
      let sending: Promise<void> | null = null;

      async function drain(): Promise<void> {
        while (pending.length > 0) {
          const text = pending;
          pending = '';
          for (const piece of cutText(text, MAX_DELTA_TEXT_BYTES)) {
            try {
              await deltas.notifyRunDelta({ runId, stepIndex, offset, text: piece });
            } catch (err) {
              log('a model step could not send its text on (the step is stored whole all the same)', err);
            }
            offset += piece.length;
          }
        }
      }

      function kick(): void {
        sending ??= drain().finally(() => {
          sending = null;
          if (pending.length > 0) kick();
        });
      }

      return {
        text(piece) {
          if (piece.length === 0) return;
          pending += piece;
          kick();
        },
        async flush() {
          while (sending) await sending;
        },
      };
    },
  };
}
export type RunDeltas = ReturnType<typeof createRunDeltas>;
