import { Button, Text } from '@mantine/core';
import { useHotkeys } from '@mantine/hooks';
import type { ReactNode } from 'react';
import { useCreateParam } from '../lib/use-create-param';
import { Can, useCan } from '../session/permissions';
import { LoadMore, type CursorListView } from './cursor-list';
import { PageHeader } from './PageHeader';
import { EmptyState, QueryState } from './states';

/**
 * An account's list page of one kind of resource (triggers, webhooks): its header with "New …" for the
 * roles that may write (also on the key "n", not while typing in a field), the items a page at a time with
 * "Load more", an empty state that says what the resource is for, and the create form (opened by the
 * button, the key or a `?create` link: useCreateParam).
 */
export function ResourceList<T>({
  title,
  description,
  noun,
  list,
  empty,
  createDialog,
  children,
}: {
  title: string;
  description: ReactNode;
  /** The resource in the words of its buttons and labels: "New trigger", "Loading triggers", "Load more triggers". */
  noun: { one: string; many: string };
  list: CursorListView<T>;
  /** The empty state: the verb of its call to action ("Create" a trigger, "Add" a webhook), which a read-only role is told it may not, and what the resource does. */
  empty: { verb: string; body: ReactNode };
  createDialog: (close: () => void) => ReactNode;
  children: (items: T[]) => ReactNode;
}) {
  const create = useCreateParam();
  const canWrite = useCan('write');
  useHotkeys([['n', () => canWrite && create.open()]]);
  return (
    <>
      <PageHeader
        title={title}
        description={description}
        actions={
          <Can right="write">
            <Button onClick={create.open} aria-keyshortcuts="n">
              New {noun.one}
            </Button>
          </Can>
        }
      />
      <QueryState query={{ ...list, data: list.items }} loadingLabel={`Loading ${noun.many}`}>
        {(items) =>
          items.length === 0 ? (
            <EmptyState
              title={`No ${noun.many} yet`}
              action={
                <Can right="write" otherwise={<Text c="dimmed">Your role here is read-only: an editor or admin can {empty.verb.toLowerCase()} one.</Text>}>
                  <Button variant="light" onClick={create.open}>
                    {empty.verb} a {noun.one}
                  </Button>
                </Can>
              }
            >
              {empty.body}
            </EmptyState>
          ) : (
            <>
              {children(items)}
              <LoadMore list={list} label={`Load more ${noun.many}`} />
            </>
          )
        }
      </QueryState>
      {create.opened && createDialog(create.close)}
    </>
  );
}
