// A destructive action asked twice: the button is replaced in place by a question and the
// same verb, so exactly one button of that name is on the page at any time and keyboard
// focus moves to the question's Cancel.

import { type ReactNode, useEffect, useRef, useState } from 'react';

export function ConfirmAction({
  label,
  question,
  onConfirm,
  pending,
  small = false,
}: {
  label: string;
  question: ReactNode;
  onConfirm: () => void;
  pending?: boolean;
  small?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const cancelRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) cancelRef.current?.focus();
  }, [asking]);
  const size = small ? ' small' : '';
  if (!asking)
    return (
      <button type="button" className={`button danger${size}`} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  return (
    <fieldset className="notice warn confirm">
      <legend className="visually-hidden">Confirm: {label}</legend>
      <p>{question}</p>
      <div className="actions">
        <button type="button" className={`button danger solid${size}`} disabled={pending} onClick={onConfirm}>
          {label}
        </button>
        <button type="button" className={`button${size}`} ref={cancelRef} onClick={() => setAsking(false)}>
          Cancel
        </button>
      </div>
    </fieldset>
  );
}
