// The small part of Markdown a guide of docs/ written for the console uses (the webhooks local
// development guide, shown on its console page as it is in the repository): headings,
// paragraphs, bullet and numbered lists, fenced code, and inline code, bold and links. Anything
// else reads as a paragraph. Pure: the page renders the blocks as React elements (no HTML is
// ever injected).

export type Block =
  | { kind: 'heading'; level: number; text: string }
  | { kind: 'paragraph'; text: string }
  | { kind: 'list'; ordered: boolean; items: string[] }
  | { kind: 'code'; lang: string; text: string };

export type Span =
  | { kind: 'text'; text: string }
  | { kind: 'code'; text: string }
  | { kind: 'strong'; text: string }
  | { kind: 'link'; text: string; href: string };

const BULLET = /^\s*[-*]\s+(.*)$/;
const NUMBERED = /^\s*\d+[.)]\s+(.*)$/;

export function markdownBlocks(source: string): Block[] {
  const lines = source.replace(/\r\n/g, '\n').split('\n');
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = /^```(\S*)\s*$/.exec(line);
    if (fence) {
      const body: string[] = [];
      i++;
      while (i < lines.length && !/^```\s*$/.test(lines[i])) body.push(lines[i++]);
      i++; // the closing fence
      blocks.push({ kind: 'code', lang: fence[1], text: body.join('\n') });
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      blocks.push({ kind: 'heading', level: heading[1].length, text: heading[2].trim() });
      i++;
      continue;
    }
    if (line.trim() === '') {
      i++;
      continue;
    }
    const ordered = NUMBERED.test(line);
    if (ordered || BULLET.test(line)) {
      const marker = ordered ? NUMBERED : BULLET;
      const items: string[] = [];
      while (i < lines.length && lines[i].trim() !== '' && !/^```/.test(lines[i])) {
        const item = marker.exec(lines[i]);
        if (item) items.push(item[1]);
        else if (items.length > 0) items[items.length - 1] += ` ${lines[i].trim()}`;
        i++;
      }
      blocks.push({ kind: 'list', ordered, items });
      continue;
    }
    const text: string[] = [];
    while (i < lines.length && lines[i].trim() !== '' && !/^(```|#{1,6}\s)/.test(lines[i])) {
      if (text.length > 0 && (BULLET.test(lines[i]) || NUMBERED.test(lines[i]))) break;
      text.push(lines[i].trim());
      i++;
    }
    blocks.push({ kind: 'paragraph', text: text.join(' ') });
  }
  return blocks;
}

/** Inline code (`…`), bold (**…**) and links ([text](href)) in a block's text; the rest is text. */
export function markdownSpans(text: string): Span[] {
  const spans: Span[] = [];
  const pattern = /`([^`]+)`|\*\*([^*]+)\*\*|\[([^\]]+)\]\(([^)\s]+)\)/g;
  let last = 0;
  for (const m of text.matchAll(pattern)) {
    const at = m.index ?? 0;
    if (at > last) spans.push({ kind: 'text', text: text.slice(last, at) });
    if (m[1] !== undefined) spans.push({ kind: 'code', text: m[1] });
    else if (m[2] !== undefined) spans.push({ kind: 'strong', text: m[2] });
    else spans.push({ kind: 'link', text: m[3], href: m[4] });
    last = at + m[0].length;
  }
  if (last < text.length) spans.push({ kind: 'text', text: text.slice(last) });
  return spans;
}
