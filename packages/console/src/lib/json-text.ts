// JSON shown to people: indented two spaces when the text is JSON, as it is otherwise (an
// excerpt cut mid-value, a body that is not JSON).

export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
