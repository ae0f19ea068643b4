// Blocks of a guide from docs/ (lib/markdown-blocks.ts) as elements: headings one level under
// the page's own h1, code in CodeBlocks, links to other pages of docs/ named by their path (the
// console does not serve them). No HTML is injected.

import type { ReactNode } from 'react';
import { type Block, markdownSpans } from '../lib/markdown-blocks.ts';
import { CodeBlock } from './code-block.tsx';

function Inline({ text }: { text: string }) {
  return (
    <>
      {markdownSpans(text).map((s, i) => {
        const key = `${i}-${s.kind}`;
        if (s.kind === 'code') return <code key={key}>{s.text}</code>;
        if (s.kind === 'strong') return <strong key={key}>{s.text}</strong>;
        if (s.kind === 'link')
          return /^https:\/\//.test(s.href) ? (
            <a key={key} href={s.href} rel="noreferrer">
              {s.text}
            </a>
          ) : (
            <span key={key}>
              {s.text} (<code>docs/{s.href}</code>)
            </span>
          );
        return <span key={key}>{s.text}</span>;
      })}
    </>
  );
}

export function MarkdownView({ blocks, label }: { blocks: readonly Block[]; label: string }) {
  let codes = 0;
  return (
    <div className="markdown">
      {blocks.map((b, i): ReactNode => {
        const key = `${i}-${b.kind}`;
        switch (b.kind) {
          case 'heading': {
            const Tag = `h${Math.min(6, Math.max(2, b.level))}` as 'h2';
            return (
              <Tag key={key}>
                <Inline text={b.text} />
              </Tag>
            );
          }
          case 'paragraph':
            return (
              <p key={key}>
                <Inline text={b.text} />
              </p>
            );
          case 'list': {
            const Tag = b.ordered ? 'ol' : 'ul';
            return (
              <Tag key={key}>
                {b.items.map((item, j) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: a guide's items have no identity; their order is fixed
                  <li key={j}>
                    <Inline text={item} />
                  </li>
                ))}
              </Tag>
            );
          }
          case 'code':
            codes++;
            return (
              <CodeBlock key={key} label={`${label}, example ${codes}`}>
                {b.text}
              </CodeBlock>
            );
        }
        return null;
      })}
    </div>
  );
}
