import { type InputHTMLAttributes, useId } from 'react';

/**
 * A labelled input with a hint and an error tied to it (aria-invalid, aria-describedby).
 * With `messageLines`, hint and error share one slot of that many lines, the error replacing
 * the hint: a check that runs when the field loses focus then moves nothing on the page, so
 * the button the pointer is pressing (the blur comes from pressing it) stays under it.
 */
export function TextField({
  label,
  hint,
  error,
  messageLines,
  ...input
}: { label: string; hint?: string; error?: string; messageLines?: 1 | 2 | 3 } & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  const shared = messageLines !== undefined;
  const hintShown = hint && !(shared && error);
  const described = [hintShown ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type="text"
        aria-invalid={error ? true : undefined}
        aria-describedby={described || undefined}
        {...input}
      />
      {shared ? (
        <div className={`message lines-${messageLines}`} aria-live="polite">
          {error ? (
            <p className="error" id={`${id}-error`}>
              {error}
            </p>
          ) : (
            hint && (
              <p className="hint" id={`${id}-hint`}>
                {hint}
              </p>
            )
          )}
        </div>
      ) : (
        <>
          {hint && (
            <p className="hint" id={`${id}-hint`}>
              {hint}
            </p>
          )}
          {error && (
            <p className="error" id={`${id}-error`}>
              {error}
            </p>
          )}
        </>
      )}
    </div>
  );
}
