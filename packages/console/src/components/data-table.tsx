// Every data table of the console: a visually hidden caption (which also names the scrolling
// frame, see table-wrap.tsx), one header cell a column, one row a record. A column renders
// only a cell's content; the cell's class (nowrap, wrap, mono) is the column's.

import type { ReactNode } from 'react';
import { TableWrap } from './table-wrap.tsx';

export interface Column<Row> {
  /** The header's text; screen readers still read a hidden one (a column of buttons: "Actions"). */
  header: string;
  headerHidden?: boolean;
  cell: (row: Row) => ReactNode;
  className?: string;
}

/** The header of a column of buttons, which only screen readers read: `{ ...ACTIONS, cell }`. */
export const ACTIONS = { header: 'Actions', headerHidden: true } as const;

export function DataTable<Row>({
  caption,
  columns,
  rows,
  rowKey,
  empty,
  footer,
}: {
  caption: ReactNode;
  /** A `false` entry is a column not shown to this user (e.g. Tenant, to all but support staff). */
  columns: readonly (Column<Row> | false)[];
  rows: readonly Row[];
  rowKey: (row: Row) => string;
  /** Shown instead of the table when there is no row; without it an empty table is shown. */
  empty?: ReactNode;
  /** Shown after the table when it has rows (a pager). */
  footer?: ReactNode;
}) {
  if (rows.length === 0 && empty !== undefined) return empty;
  const shown = columns.filter((c): c is Column<Row> => c !== false);
  return (
    <>
      <TableWrap>
        <table>
          <caption className="visually-hidden">{caption}</caption>
          <thead>
            <tr>
              {shown.map((c) => (
                <th scope="col" key={c.header}>
                  {c.headerHidden ? <span className="visually-hidden">{c.header}</span> : c.header}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={rowKey(row)}>
                {shown.map((c) => (
                  <td key={c.header} className={c.className}>
                    {c.cell(row)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      {footer}
    </>
  );
}
