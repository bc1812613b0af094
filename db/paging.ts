/**
 * Keyset pagination on (created_at, id), newest first (docs/api.md § Pagination). The cursor keeps created_at as
 * Postgres prints it, so microseconds survive the round trip (a JS Date would drop them).
 */
export interface PageRequest {
  limit: number;
  after?: PageKey;
}
export interface PageKey {
  createdAt: string;
  id: string;
}
export interface Page<T> {
  items: T[];
  next?: PageKey;
}

/** Columns every paged query selects besides the row. */
export const PAGE_KEY_COLUMNS = `created_at::text AS page_created_at`;

/**
 * The WHERE fragment and ORDER/LIMIT tail for a page. `firstParam` is the number of the first
 * placeholder it may use; its params are appended after the caller's own.
 */
export function keysetTail(page: PageRequest, firstParam: number, alias = ''): { where: string; tail: string; params: unknown[] } {
  const col = (c: string) => (alias ? `${alias}.${c}` : c);
  const params: unknown[] = [];
  let where = '';
  if (page.after) {
    where = `AND (${col('created_at')}, ${col('id')}) < ($${firstParam}::timestamptz, $${firstParam + 1}::uuid)`;
    params.push(page.after.createdAt, page.after.id);
  }
  params.push(page.limit + 1);
  const tail = `ORDER BY ${col('created_at')} DESC, ${col('id')} DESC LIMIT $${firstParam + params.length - 1}`;
  return { where, tail, params };
}

/** Cuts the extra row fetched to know whether more remain. */
export function toPage<R extends { id: string; page_created_at: string }, T>(rows: R[], limit: number, map: (r: R) => T): Page<T> {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  return {
    items: kept.map(map),
    next: more && last ? { createdAt: last.page_created_at, id: last.id } : undefined,
  };
}
