import { Badge, Group, Paper, Stack, Text } from '@mantine/core';
import type { ReactNode } from 'react';
import { JsonBlock } from '../../components/JsonBlock';
import { formatDuration } from '../../lib/dates';
import { isCopied } from './rerun';
import type { RunStep } from './use-run-events';

function Json({ label, value }: { label: string; value: unknown }) {
  return value === null || value === undefined ? null : <JsonBlock label={label} value={value} />;
}

interface ModelOutput {
  content?: string | null;
  toolCalls?: Array<{ id: string; name: string; arguments: unknown }>;
  finishReason?: string;
}

const BADGES: Record<RunStep['type'], { label: string; color: string }> = {
  model: { label: 'model', color: 'violet' },
  tool: { label: 'tool call', color: 'cyan' },
  approval: { label: 'approval', color: 'orange' },
};

/**
 * One step of a run: the model's message and the tools it asked for, or a tool call's arguments and result;
 * timings and tokens; `Copied` when it was copied from the run this one reruns; `action` (an ended run's
 * `Rerun from here`).
 */
export function StepItem({ step, action }: { step: RunStep; action?: ReactNode }) {
  const copied = isCopied(step);
  const ms = step.startedAt && step.finishedAt ? new Date(step.finishedAt).getTime() - new Date(step.startedAt).getTime() : null;
  const usage = step.usage as { promptTokens?: number; completionTokens?: number } | null;
  const model = step.type === 'model' ? (step.output as ModelOutput | null) : null;
  return (
    <Paper component="li" withBorder p="sm" aria-label={`Step ${step.index + 1}: ${step.type} ${step.name}${copied ? ', copied' : ''}`}>
      <Stack gap="xs">
        <Group gap="sm" justify="space-between">
          <Group gap="sm">
            <Text fw={600}>#{step.index + 1}</Text>
            <Badge variant="light" color={BADGES[step.type].color}>
              {BADGES[step.type].label}
            </Badge>
            <Text fw={500}>{step.name}</Text>
            {copied && (
              <Badge variant="outline" color="gray" title="Copied from the run this one reruns: recorded there, not made again">
                Copied
              </Badge>
            )}
            {step.error && (
              <Badge color="red" variant="light">
                failed
              </Badge>
            )}
          </Group>
          <Group gap="md">
            {usage && (usage.promptTokens !== undefined || usage.completionTokens !== undefined) && (
              <Text size="sm" c="dimmed">
                {usage.promptTokens ?? 0} prompt + {usage.completionTokens ?? 0} completion tokens
              </Text>
            )}
            <Text size="sm" c="dimmed">
              {formatDuration(ms)}
            </Text>
            {action}
          </Group>
        </Group>
        {step.error && (
          <Text c="red" size="sm">
            {step.error}
          </Text>
        )}
        {model ? (
          <>
            {model.content && <Json label="Message" value={model.content} />}
            {model.toolCalls?.map((call) => (
              <Json key={call.id} label={`Calls ${call.name} with`} value={call.arguments} />
            ))}
            {step.index === 0 && <Json label="Context sent to the model" value={step.input} />}
          </>
        ) : (
          <>
            <Json label="Input" value={(step.input as { arguments?: unknown } | null)?.arguments ?? step.input} />
            <Json label="Output" value={step.output} />
          </>
        )}
      </Stack>
    </Paper>
  );
}
