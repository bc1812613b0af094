import type { ReactNode } from 'react';
import { LoadMore, type CursorListView } from './cursor-list';
import { EmptyState, QueryState } from './states';
import { TimelineItems } from './Timeline';

/**
 * A cursor-paged timeline (a trigger's fires, a webhook's deliveries), newest first: its entries with
 * "Load older …", or an empty state that says what will show here. `before` goes above the entries, also
 * when there are none (a delivery linked to that is not on the pages loaded).
 */
export function PagedTimeline<T>({
  list,
  noun,
  empty,
  before,
  children,
}: {
  list: CursorListView<T>;
  /** The entries in the words of the list's labels: "Fires", "Loading fires", "Load older fires", "No fires yet". */
  noun: string;
  empty: ReactNode;
  before?: (items: T[]) => ReactNode;
  children: (item: T) => ReactNode;
}) {
  const many = noun.toLowerCase();
  return (
    <QueryState query={{ ...list, data: list.items }} loadingLabel={`Loading ${many}`}>
      {(items) => (
        <>
          {before?.(items)}
          {items.length === 0 ? (
            <EmptyState title={`No ${many} yet`}>{empty}</EmptyState>
          ) : (
            <>
              <TimelineItems label={noun} spacing="xs">
                {items.map(children)}
              </TimelineItems>
              <LoadMore list={list} label={`Load older ${many}`} />
            </>
          )}
        </>
      )}
    </QueryState>
  );
}
