import cronstrue from 'cronstrue';

const MACROS: Record<string, string> = {
  '@yearly': 'Once a year, at midnight on 1 January',
  '@annually': 'Once a year, at midnight on 1 January',
  '@monthly': 'Once a month, at midnight on the 1st',
  '@weekly': 'Once a week, at midnight on Sunday',
  '@daily': 'Every day, at midnight',
  '@midnight': 'Every day, at midnight',
  '@hourly': 'Every hour, on the hour',
};

/**
 * A cron expression in words (cronstrue), for a person to check what they typed: "At 09:00, Monday through
 * Friday". Whether the API accepts it is the API's to say (GET /api/schedule-preview); this only reads it.
 * Null when it cannot be read.
 */
export function cronInWords(expression: string): string | null {
  const text = expression.trim();
  if (!text) return null;
  const macro = MACROS[text.toLowerCase()];
  if (macro) return macro;
  const every = /^@every\s+(.+)$/i.exec(text);
  if (every) return `Every ${every[1]}, counted from the Unix epoch`;
  try {
    return cronstrue.toString(text, { use24HourTimeFormat: true, verbose: false, throwExceptionOnParseError: true });
  } catch {
    return null;
  }
}
