// The part of an id that tells it from its neighbours. Guard's ids are time-ordered (UUIDv7,
// `sig_` + a UUIDv7's hex): their first characters are the creation time, the same for every
// row of a page, so a list shows their random end: a UUID's last group, or the last 10
// characters after an ellipsis.

export function shortId(id: string): string {
  const dash = id.lastIndexOf('-');
  if (dash >= 0) return id.slice(dash + 1);
  return id.length > 12 ? `…${id.slice(-10)}` : id;
}
