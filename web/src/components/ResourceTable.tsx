import { Anchor, Table } from '@mantine/core';
import type { ReactNode } from 'react';
import { Link } from 'react-router';

/** A column of a ResourceTable: its header and what each row shows in it. */
export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
}

/**
 * A page of resources as a table named for screen readers (`label`): the first column each one's name, a
 * link to its page; then `columns`. Scrolls sideways on a narrow screen rather than squeezing.
 */
export function ResourceTable<T extends { id: string; name: string }>({ label, rows, href, columns }: { label: string; rows: T[]; href: (row: T) => string; columns: Column<T>[] }) {
  return (
    <Table.ScrollContainer minWidth={800}>
      <Table highlightOnHover verticalSpacing="sm" aria-label={label}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Name</Table.Th>
            {columns.map((c) => (
              <Table.Th key={c.header}>{c.header}</Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((row) => (
            <Table.Tr key={row.id}>
              <Table.Td>
                <Anchor component={Link} to={href(row)} fw={500}>
                  {row.name}
                </Anchor>
              </Table.Td>
              {columns.map((c) => (
                <Table.Td key={c.header}>{c.cell(row)}</Table.Td>
              ))}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
