// The one filter form identity providers send to find a resource before creating it
// (RFC 7644 §3.4.2.2): `<attribute> eq "<value>"`. Attribute names and the operator are
// case-insensitive; the value is a JSON string. Any other expression (other operators,
// `and`/`or`, attributes not listed) is refused as invalidFilter rather than half-applied: a
// provider that got every user for a filter it meant to narrow would link the wrong account.

import { ScimError } from './protocol.ts';

export interface EqFilter<A extends string> {
  attribute: A;
  value: string;
}

const EQ = /^\s*([A-Za-z][A-Za-z0-9.]*)\s+eq\s+("(?:[^"\\]|\\.)*")\s*$/i;

/** The filter, with `attributes` naming the canonical spelling of each attribute allowed. */
export function parseEqFilter<A extends string>(filter: string, attributes: readonly A[]): EqFilter<A> {
  const m = EQ.exec(filter);
  const refuse = () =>
    new ScimError(
      400,
      `unsupported filter: Guard filters with ${attributes.map((a) => `${a} eq "…"`).join(', ')}`,
      'invalidFilter',
    );
  if (!m) throw refuse();
  const attribute = attributes.find((a) => a.toLowerCase() === m[1].toLowerCase());
  if (!attribute) throw refuse();
  let value: unknown;
  try {
    value = JSON.parse(m[2]);
  } catch {
    throw refuse();
  }
  if (typeof value !== 'string') throw refuse();
  return { attribute, value };
}
