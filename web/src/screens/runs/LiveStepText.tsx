import { Code, Group, Loader, Paper, Stack, Text } from '@mantine/core';
import { useEffect, useRef } from 'react';
import type { Draft, LiveText } from './live-text';

/** Characters a block of the growing text holds before the next line starts a new one. */
const BLOCK_CHARS = 4_000;

/** A new line-block at the end of `box`, and its text node. */
function block(box: HTMLElement): Text {
  const line = document.createElement('span');
  line.style.display = 'block';
  const text = document.createTextNode('');
  line.append(text);
  box.append(line);
  return text;
}

/**
 * The model step in progress: its text growing as it arrives. The text is appended to a text node at most
 * once per animation frame, outside React (a 20,000-token answer costs a small layout a frame, not a render of
 * everything per token); the view follows the end unless the reader scrolled up. Not a live region: a
 * screen reader would read every token. It is named `Model output so far` and can be focused and read at will.
 */
export function LiveStepText({ live, draft }: { live: LiveText; draft: Draft }) {
  const pre = useRef<HTMLPreElement>(null);
  const count = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    // Held here, not read from the refs later: React detaches refs before it runs this effect's clean-up, and a frame may come between.
    const box = pre.current!;
    const counter = count.current!;
    box.replaceChildren();
    let total = draft.from;
    let node = block(box);
    // Text goes on at the end of one text node; past BLOCK_CHARS it starts a new block at a line's end, so a
    // frame lays out the last block only, not everything written so far.
    const append = (text: string): void => {
      total += text.length;
      let start = 0;
      for (;;) {
        const room = BLOCK_CHARS - node.length;
        const cut = text.indexOf('\n', room > 0 ? start + room : start);
        if (cut < 0) return void node.appendData(start === 0 ? text : text.slice(start));
        node.appendData(text.slice(start, cut));
        node = block(box);
        start = cut + 1;
      }
    };
    const counted = (): void => void (counter.textContent = `${total.toLocaleString()} characters`);
    append(live.text());
    box.scrollTop = box.scrollHeight;
    counted();
    let pending: string[] = [];
    let frame = 0;
    const flush = (): void => {
      frame = 0;
      const atEnd = box.scrollHeight - box.scrollTop - box.clientHeight < 32;
      append(pending.length === 1 ? pending[0]! : pending.join(''));
      pending = [];
      counted();
      if (atEnd) box.scrollTop = box.scrollHeight;
    };
    const stop = live.subscribe((piece) => {
      pending.push(piece);
      frame ||= requestAnimationFrame(flush);
    });
    return () => {
      stop();
      cancelAnimationFrame(frame);
    };
  }, [live, draft]);
  return (
    <Paper withBorder p="sm" aria-label={`Step ${draft.stepIndex + 1}: model, in progress`} component="section">
      <Stack gap="xs">
        <Group gap="sm" justify="space-between">
          <Group gap="sm">
            <Text fw={600}>#{draft.stepIndex + 1}</Text>
            <Loader size="xs" aria-hidden="true" />
            <Text fw={500}>The model is writing</Text>
          </Group>
          <Text size="sm" c="dimmed" ref={count} />
        </Group>
        {draft.from > 0 && (
          <Text size="sm" c="dimmed">
            This page joined mid-answer: the text before this point shows when the step ends.
          </Text>
        )}
        <Code block tabIndex={0} aria-label="Model output so far" ref={pre} style={{ maxHeight: 400, overflow: 'auto', whiteSpace: 'pre-wrap', contain: 'content' }} />
      </Stack>
    </Paper>
  );
}
