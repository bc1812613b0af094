/** The cursor of a `Link: <…?cursor=…&limit=…>; rel="next"` header (docs/api.md § Pagination), if more remain. */
export function nextCursor(link: string | null): string | undefined {
  if (!link) return undefined;
  for (const part of link.split(',')) {
    const match = /<([^>]+)>\s*;\s*rel="?next"?/.exec(part);
    if (match) return new URL(match[1]!, window.location.origin).searchParams.get('cursor') ?? undefined;
  }
  return undefined;
}
