import { Button, Center } from '@mantine/core';
import { useInfiniteQuery, type QueryKey } from '@tanstack/react-query';
import { unwrap } from '../api/errors';
import { nextCursor } from '../lib/link-header';

export interface Page<T> {
  items: T[];
  next?: string;
}

/** One page of an openapi-fetch list result: its items and the cursor of the next page (the Link header). */
export function pageOf<T>(result: { data?: T[]; error?: unknown; response: Response }): Page<T> {
  const items = unwrap(result);
  return { items, next: nextCursor(result.response.headers.get('Link')) };
}

/**
 * A cursor-paged list (docs/api.md § Pagination): the first page, then one more per "Load more", never
 * more than the API's page at a time. `fetchPage(cursor)` asks the API for one page (see pageOf).
 */
export function useCursorList<T>(queryKey: QueryKey, fetchPage: (cursor: string | undefined) => Promise<Page<T>>, options: { refetchInterval?: number | false } = {}) {
  const query = useInfiniteQuery({
    queryKey,
    queryFn: ({ pageParam }) => fetchPage(pageParam),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.next,
    refetchInterval: options.refetchInterval,
  });
  const items = query.data?.pages.flatMap((page) => page.items);
  return { ...query, items };
}

/** What a screen shows of a cursor list (useCursorList): the items so far, its loading and error, and its next page. */
export interface CursorListView<T> {
  items: T[] | undefined;
  isPending: boolean;
  error: unknown;
  refetch: () => unknown;
  hasNextPage: boolean;
  isFetchingNextPage: boolean;
  fetchNextPage: () => unknown;
}

/** The "Load more" button of a cursor list; absent once the last page is in. */
export function LoadMore({ list, label = 'Load more' }: { list: Pick<CursorListView<unknown>, 'hasNextPage' | 'isFetchingNextPage' | 'fetchNextPage'>; label?: string }) {
  if (!list.hasNextPage) return null;
  return (
    <Center mt="md">
      <Button variant="default" loading={list.isFetchingNextPage} onClick={() => void list.fetchNextPage()}>
        {label}
      </Button>
    </Center>
  );
}
