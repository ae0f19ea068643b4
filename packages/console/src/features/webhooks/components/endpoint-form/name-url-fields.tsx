import { TextField } from '../../../../components/text-field.tsx';
import { NAME_MAX_LENGTH } from '../../endpoint-rules.ts';

/** Name and URL; each is checked as it is left (`onLeave`), and the URL shows the server's refusal too. */
export function NameUrlFields({
  name,
  url,
  errors,
  onName,
  onUrl,
  onLeave,
}: {
  name: string;
  url: string;
  errors: { name?: string; url?: string };
  onName: (name: string) => void;
  onUrl: (url: string) => void;
  onLeave: (field: 'name' | 'url') => void;
}) {
  return (
    <>
      <TextField
        label="Name"
        value={name}
        maxLength={NAME_MAX_LENGTH}
        autoComplete="off"
        hint="Shown in this console only, e.g. “SIEM ingest”."
        messageLines={2}
        error={errors.name}
        onChange={(e) => onName(e.target.value)}
        onBlur={() => onLeave('name')}
      />
      <TextField
        label="URL"
        type="url"
        inputMode="url"
        value={url}
        autoComplete="off"
        spellCheck={false}
        placeholder="https://hooks.example.com/guard"
        hint="Where Guard POSTs each signal. https:// only."
        messageLines={2}
        error={errors.url}
        onChange={(e) => onUrl(e.target.value)}
        onBlur={() => onLeave('url')}
      />
    </>
  );
}
