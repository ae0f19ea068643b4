/**
 * Preformatted text that may scroll sideways (or, with `wrap`, breaks anywhere instead): a labelled region that takes keyboard focus, so
 * people without a mouse can scroll it too.
 */
export function CodeBlock({ label, children, wrap = false }: { label: string; children: string; wrap?: boolean }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
    <section className={wrap ? 'code-block wrap' : 'code-block'} aria-label={label} tabIndex={0}>
      <pre>
        <code>{children}</code>
      </pre>
    </section>
  );
}
