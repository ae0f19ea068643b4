/**
 * Preformatted text that may scroll sideways: a labelled region that takes keyboard focus, so
 * people without a mouse can scroll it too.
 */
export function CodeBlock({ label, children }: { label: string; children: string }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
    <section className="code-block" aria-label={label} tabIndex={0}>
      <pre>
        <code>{children}</code>
      </pre>
    </section>
  );
}
