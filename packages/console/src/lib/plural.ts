// A count with its noun, singular for one ("1 attempt", "3 attempts", "1,024 deliveries").

export function plural(n: number, singular: string, pluralForm = `${singular}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? singular : pluralForm}`;
}
