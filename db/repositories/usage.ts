import type { Queryable } from '../pool';

/** One UTC day of an account's use (account_usage_days, migration 19); a day with nothing is all zeros. */
export interface UsageDayRow {
  /** YYYY-MM-DD. */
  date: string;
  runs: number;
  prompt_tokens: string;
  completion_tokens: string;
  tool_calls: string;
}

/** An account's use per UTC day (account_usage_days, migration 19). */
export function createUsageRepository(db: Queryable) {
  return {
    /** Prompt + completion tokens the account has spent today (UTC): what MODEL_TOKENS_PER_DAY is checked against. */
    async modelTokensToday(accountId: string, q: Queryable = db): Promise<number> {
      const { rows } = await q.query<{ tokens: string }>(
        `SELECT prompt_tokens + completion_tokens AS tokens FROM account_usage_days WHERE account_id = $1 AND day = (now() AT TIME ZONE 'UTC')::date`,
        [accountId],
      );
      return Number(rows[0]?.tokens ?? 0);
    },

    /** Every day from `from` to `to` (YYYY-MM-DD, inclusive), oldest first, with the account's use; days with none are zeros. */
    async listUsageDays(accountId: string, from: string, to: string, q: Queryable = db): Promise<UsageDayRow[]> {
      const { rows } = await q.query<UsageDayRow>(
        `SELECT to_char(d.day, 'YYYY-MM-DD') AS date, coalesce(u.runs, 0) AS runs, coalesce(u.prompt_tokens, 0) AS prompt_tokens,
                coalesce(u.completion_tokens, 0) AS completion_tokens, coalesce(u.tool_calls, 0) AS tool_calls
           FROM generate_series($2::date, $3::date, interval '1 day') AS d(day)
           LEFT JOIN account_usage_days u ON u.account_id = $1 AND u.day = d.day::date
          ORDER BY d.day`,
        [accountId, from, to],
      );
      return rows;
    },
  };
}
export type UsageRepository = ReturnType<typeof createUsageRepository>;
