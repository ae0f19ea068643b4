// A value shown once (a signing secret, an API token, a set-password link, an enrol command):
// a read-only field with its label and a Copy button. The value lives only in the component's
// props: it is never written to storage or the URL, so it is gone once the page is left.

import { type ReactNode, useId, useRef, useState } from 'react';

async function copyText(input: HTMLInputElement | HTMLTextAreaElement): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(input.value);
    return true;
  } catch {
    // No clipboard API (an insecure origin, or permission refused): select the text for the user.
    input.focus();
    input.select();
    return document.execCommand?.('copy') ?? false;
  }
}

export function CopyField({
  label,
  value,
  multiline = false,
  hint,
  copyLabel = 'Copy',
}: {
  label: string;
  value: string;
  multiline?: boolean;
  hint?: string;
  /** The button's name; where one page has several copy fields, name what each copies. */
  copyLabel?: string;
}) {
  const id = useId();
  const ref = useRef<HTMLInputElement & HTMLTextAreaElement>(null);
  const [copied, setCopied] = useState<'yes' | 'no' | undefined>();
  const onCopy = async () => {
    if (!ref.current) return;
    setCopied((await copyText(ref.current)) ? 'yes' : 'no');
  };
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <div className="inline-field">
        {multiline ? (
          <textarea id={id} ref={ref} readOnly value={value} rows={3} spellCheck={false} aria-describedby={`${id}-s`} />
        ) : (
          <input
            id={id}
            ref={ref}
            type="text"
            readOnly
            value={value}
            spellCheck={false}
            autoComplete="off"
            aria-describedby={`${id}-s`}
            onFocus={(e) => e.currentTarget.select()}
          />
        )}
        <button type="button" className="button" onClick={onCopy}>
          {copyLabel}
        </button>
      </div>
      <p className="hint" id={`${id}-s`} role="status">
        {copied === 'yes' ? 'Copied to the clipboard.' : copied === 'no' ? 'Select the text and copy it.' : hint}
      </p>
    </div>
  );
}

/** A new secret in its "shown only once" notice: what to do with it (children), then its field. */
export function ShownOnce({ label, value, children }: { label: string; value: string; children: ReactNode }) {
  return (
    <div className="notice warn" role="status">
      <p>
        <strong>Shown only once.</strong> {children}
      </p>
      <CopyField label={label} value={value} copyLabel="Copy token" />
    </div>
  );
}
