// The frame of every data table. On a narrow screen a wide table scrolls sideways inside it;
// while it does, the frame is a labelled region in the tab order (named by the table's
// caption), so it can be scrolled with the keyboard too.

import { type ReactNode, useEffect, useRef, useState } from 'react';

export function TableWrap({ children }: { children: ReactNode }) {
  const ref = useRef<HTMLDivElement>(null);
  const [scrolls, setScrolls] = useState(false);
  const [label, setLabel] = useState<string>();
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const measure = () => {
      setScrolls(el.scrollWidth > el.clientWidth + 1);
      setLabel(el.querySelector('caption')?.textContent ?? undefined);
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    const table = el.querySelector('table');
    if (table) observer.observe(table);
    return () => observer.disconnect();
  }, []);
  return (
    // biome-ignore lint/a11y/useAriaPropsSupportedByRole: the label is set only with role="region"
    <div
      ref={ref}
      className="table-wrap"
      tabIndex={scrolls ? 0 : undefined}
      role={scrolls ? 'region' : undefined}
      aria-label={scrolls ? label : undefined}
    >
      {children}
    </div>
  );
}
