import { useState } from 'react';
import { useTenantSettings, useUpdateTenantSettings } from '../api/servers.ts';

/** The tenant admin's consent to support-initiated collection (audited by the server). */
export function SupportAccess() {
  const settings = useTenantSettings(true);
  const update = useUpdateTenantSettings();
  // What was asked, shown at once (a controlled input would otherwise snap back until the
  // mutation's state arrives); the server's answer replaces it, a refusal puts it back.
  const [asked, setAsked] = useState<boolean | undefined>();
  const allowed = asked ?? settings.data?.allow_support_collection ?? false;
  const change = (value: boolean) => {
    setAsked(value);
    update.mutate({ allow_support_collection: value }, { onSettled: () => setAsked(undefined) });
  };
  return (
    <section className="card" aria-labelledby="support-access">
      <h2 id="support-access">Support access</h2>
      <label className="checkbox">
        <input
          type="checkbox"
          checked={allowed}
          disabled={settings.isPending}
          onChange={(e) => change(e.target.checked)}
        />{' '}
        Let Guard support request bundles from these servers
      </label>
      <p className="hint">
        {allowed
          ? 'Guard support staff may ask any of your servers for a support bundle; every request is in your audit log.'
          : 'Only your admins can ask your servers for a support bundle.'}
      </p>
      {update.isError && (
        <p className="notice error" role="alert">
          Could not change it: {update.error.message}
        </p>
      )}
    </section>
  );
}
