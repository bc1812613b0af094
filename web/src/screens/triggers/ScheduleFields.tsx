import { Group, List, NativeSelect, Select, Stack, Text, TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { client } from '../../api/client';
import { describeError, unwrap } from '../../api/errors';
import type { JsonSchema } from '../../api/openapi-schema';
import { DateTime } from '../../components/DateTime';
import { cronInWords } from '../../lib/cron-words';
import { viewerTimeZone } from '../../lib/dates';

export interface ScheduleConfig {
  cronExpression: string;
  timezone: string;
  overlapPolicy: string;
  catchupWindow: string;
}

const TIME_ZONES = ['UTC', ...Intl.supportedValuesOf('timeZone').filter((zone) => zone !== 'UTC')];

const OVERLAP_WORDS: Record<string, string> = {
  skip: 'Skip: start nothing while the previous fire still runs',
  buffer_one: 'Buffer one: run one more after the previous fire',
  buffer_all: 'Buffer all: run every one, one after another',
  cancel_other: 'Cancel other: cancel the previous fire, then start',
  allow_all: 'Allow all: start every fire at once',
};

/**
 * A cron/schedule trigger's config: the expression with what it means in words and the next five times the
 * API says it will fire (GET /api/schedule-preview, which also judges it: its 400 shows on the field), the
 * time zone it is read in, the overlap policy and the catch-up window — options and defaults from the API's
 * own schema (ScheduleTriggerConfig).
 */
export function ScheduleFields({
  schema,
  value,
  onChange,
  errorOf,
}: {
  schema: JsonSchema | undefined;
  value: ScheduleConfig;
  onChange: (next: ScheduleConfig) => void;
  errorOf: (field: string) => string | undefined;
}) {
  const properties = schema?.properties ?? {};
  const [expression] = useDebouncedValue(value.cronExpression.trim(), 400);
  const [timezone] = useDebouncedValue(value.timezone, 400);
  const preview = useQuery({
    queryKey: ['schedule-preview', expression, timezone],
    queryFn: async () => unwrap(await client.GET('/api/schedule-preview', { params: { query: { cronExpression: expression, timezone, n: 5 } } })),
    enabled: expression.length > 0,
    retry: false,
    staleTime: 30_000,
  });
  const words = cronInWords(value.cronExpression);
  // The API's 400 names the field it refuses (querystring.cronExpression / querystring.timezone): shown on it.
  const previewMessage = preview.error ? describeError(preview.error) : undefined;
  const previewField = previewMessage && /^querystring\.(\w+):/.exec(previewMessage)?.[1];
  const previewError = previewMessage?.replace(/^querystring\.\w+: /, '');
  const stale = expression !== value.cronExpression.trim() || timezone !== value.timezone;
  const set = (patch: Partial<ScheduleConfig>) => onChange({ ...value, ...patch });
  const overlapOptions = (properties.overlapPolicy?.enum ?? Object.keys(OVERLAP_WORDS)).map(String);

  return (
    <Stack gap="sm">
      <TextInput
        label="Cron expression"
        required
        placeholder="0 9 * * 1-5"
        description={properties.cronExpression?.description}
        value={value.cronExpression}
        onChange={(e) => set({ cronExpression: e.currentTarget.value })}
        error={errorOf('configJson.cronExpression') ?? (!stale && previewField === 'cronExpression' ? previewError : undefined)}
        styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
      />
      <Text size="sm" aria-live="polite">
        {words ? (
          <>
            <Text span fw={500}>
              In words:
            </Text>{' '}
            {words}
          </>
        ) : (
          <Text span c="dimmed">
            Type an expression to see it in words.
          </Text>
        )}
      </Text>
      <Select
        label="Time zone"
        description={properties.timezone?.description}
        searchable
        data={TIME_ZONES}
        value={value.timezone}
        onChange={(zone) => set({ timezone: zone ?? 'UTC' })}
        allowDeselect={false}
        nothingFoundMessage="No such time zone"
        error={errorOf('configJson.timezone') ?? (!stale && previewField === 'timezone' ? previewError : undefined)}
        limit={50}
      />
      <div>
        <Text size="sm" fw={500}>
          Next 5 fire times
        </Text>
        {!expression ? (
          <Text size="sm" c="dimmed">
            They show once the expression is typed.
          </Text>
        ) : preview.isPending ? (
          <Text size="sm" c="dimmed">
            Asking the API…
          </Text>
        ) : preview.data ? (
          <List size="sm" aria-label="Next 5 fire times" spacing={2}>
            {preview.data.map((t) => (
              <List.Item key={t.at}>
                <Group gap={6} wrap="nowrap">
                  <Text span size="sm" ff="monospace">
                    {t.localTime}
                  </Text>
                  {timezone !== viewerTimeZone && (
                    <Text span size="xs" c="dimmed">
                      (your time: <DateTime value={t.at} />)
                    </Text>
                  )}
                </Group>
              </List.Item>
            ))}
          </List>
        ) : (
          <Text size="sm" c="red.9">
            {previewError}
          </Text>
        )}
      </div>
      <Group grow align="flex-start">
        <NativeSelect
          label="Overlap policy"
          description="When a fire is due while the previous one still runs"
          data={overlapOptions.map((option) => ({ value: option, label: OVERLAP_WORDS[option] ?? option }))}
          value={value.overlapPolicy}
          onChange={(e) => set({ overlapPolicy: e.currentTarget.value })}
          error={errorOf('configJson.overlapPolicy')}
        />
        <TextInput
          label="Catch-up window"
          description={properties.catchupWindow?.description}
          placeholder="1h"
          value={value.catchupWindow}
          onChange={(e) => set({ catchupWindow: e.currentTarget.value })}
          error={errorOf('configJson.catchupWindow')}
        />
      </Group>
    </Stack>
  );
}
