/** A delta of the run's stream: a piece of a model step's text, `offset` where it starts in that text. */
export interface TextDelta {
  stepIndex: number;
  offset: number;
  text: string;
}

/** The text being shown: the step it belongs to, and where it starts in that step's text (above 0: joined mid-step). */
export interface Draft {
  stepIndex: number;
  from: number;
}

/**
 * The text of the model step in progress, as its deltas arrive (docs/console.md § Runs). Kept outside React
 * state on purpose: a 20,000-token answer comes as thousands of deltas, and a render (and a string copy of
 * everything so far) per delta would make the page crawl. Pieces are kept as they came and joined only when
 * a view starts (`text`); a view that is showing it gets each new piece (`subscribe`) and appends it to the
 * page itself, once per animation frame. React hears only when a new draft begins or the draft ends (`onDraft`).
 */
export class LiveText {
  private draft: Draft | null = null;
  private pieces: string[] = [];
  /** Where the next piece must start in the step's text. */
  private end = 0;
  /** Steps up to this index have been received whole: their deltas are late. */
  private doneThrough = -1;
  private listener: ((piece: string) => void) | null = null;

  constructor(private readonly onDraft: (draft: Draft | null) => void) {}

  add(delta: TextDelta): void {
    if (delta.stepIndex <= this.doneThrough || (this.draft && delta.stepIndex < this.draft.stepIndex)) return;
    if (!this.draft || delta.stepIndex !== this.draft.stepIndex || delta.offset > this.end) {
      // A new step, or a gap (a stream opened again mid-step): the text starts over from here.
      this.draft = { stepIndex: delta.stepIndex, from: delta.offset };
      this.pieces = [delta.text];
      this.end = delta.offset + delta.text.length;
      this.onDraft(this.draft);
      return;
    }
    // Overlapping what is already here (a stream opened again sends from where the step is): only the rest.
    const piece = delta.text.slice(this.end - delta.offset);
    if (!piece) return;
    this.pieces.push(piece);
    this.end += piece.length;
    this.listener?.(piece);
  }

  /** The step arrived whole (or the run ended): its deltas are done with, and late ones are ignored. */
  stepDone(stepIndex: number): void {
    this.doneThrough = Math.max(this.doneThrough, stepIndex);
    if (this.draft && this.draft.stepIndex <= stepIndex) this.clear();
  }

  clear(): void {
    if (!this.draft) return;
    this.draft = null;
    this.pieces = [];
    this.end = 0;
    this.onDraft(null);
  }

  /** Everything so far (joined once, and kept joined). */
  text(): string {
    if (this.pieces.length > 1) this.pieces = [this.pieces.join('')];
    return this.pieces[0] ?? '';
  }

  /** `fn` gets each piece that arrives after this call (one view at a time). */
  subscribe(fn: (piece: string) => void): () => void {
    this.listener = fn;
    return () => {
      if (this.listener === fn) this.listener = null;
    };
  }
}
