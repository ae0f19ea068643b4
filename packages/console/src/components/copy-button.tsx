// A button that copies a text the page shows (a request body, an example payload) to the
// clipboard, and says in a status line whether it could.

import { useState } from 'react';

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState<'yes' | 'no' | undefined>();
  const onCopy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied('yes');
    } catch {
      setCopied('no'); // no clipboard here (an insecure origin, or permission refused)
    }
  };
  return (
    <span className="copy-button">
      <button type="button" className="button small" onClick={onCopy}>
        {label}
      </button>
      <span className="hint" role="status">
        {copied === 'yes' ? 'Copied.' : copied === 'no' ? 'Could not copy: select the text instead.' : ''}
      </span>
    </span>
  );
}
