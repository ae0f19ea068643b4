// Settings > Single sign-on, the SAML part (admin): what to give the identity provider (SP
// entity ID, ACS URL, metadata URL, each with a Copy button), and the IdP's side (entity ID,
// single sign-on URL, signing certificates, email domains, attributes, admin group). The
// server checks everything again and says which field is wrong; its error lands on that field.

import { type FormEvent, useId, useState } from 'react';
import { ConfirmAction } from '../../../components/confirm-action.tsx';
import { CopyField } from '../../../components/copy-field.tsx';
import { BlockSkeleton, ErrorNotice, WriteError } from '../../../components/query-states.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { ApiError } from '../../../lib/api-client.ts';
import { type SamlView, useRemoveSaml, useSamlConnection, useSaveSaml } from '../api/saml.ts';

type Connection = NonNullable<SamlView['connection']>;

interface Draft {
  idpEntityId: string;
  ssoUrl: string;
  certificates: string;
  domains: string;
  adminGroup: string;
  emailAttribute: string;
  groupsAttribute: string;
}

const draftOf = (c: Connection | null): Draft => ({
  idpEntityId: c?.idp_entity_id ?? '',
  ssoUrl: c?.sso_url ?? '',
  certificates: c?.idp_certificates.map((x) => x.pem.trim()).join('\n') ?? '',
  domains: c?.email_domains.join(', ') ?? '',
  adminGroup: c?.admin_group ?? '',
  emailAttribute: c?.email_attribute ?? '',
  groupsAttribute: c?.groups_attribute ?? '',
});

/** Each PEM block pasted; text without one is sent as is (the bare base64 some IdPs show). */
function certificatesOf(text: string): string[] {
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g);
  if (blocks) return blocks;
  return text.trim() ? [text.trim()] : [];
}

const domainsOf = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((d) => d.trim())
    .filter(Boolean);

const orNull = (text: string) => (text.trim() ? text.trim() : null);

/** The field a server error belongs to. */
function fieldOf(error: unknown): keyof Draft | undefined {
  if (!(error instanceof ApiError)) return undefined;
  if (error.code === 'invalid_sso_url') return 'ssoUrl';
  if (error.code === 'invalid_certificate') return 'certificates';
  if (error.code === 'invalid_domain' || error.code === 'domain_taken') return 'domains';
  return undefined;
}

function ServiceProviderFacts({ sp }: { sp: SamlView['service_provider'] }) {
  return (
    <section className="sso-part" aria-labelledby="saml-sp-heading">
      <h3 id="saml-sp-heading">Give your identity provider these</h3>
      <p>
        Create a SAML application at your identity provider with these values. It must sign its assertions, send the
        user's email as the NameID (format <code>emailAddress</code>) or in an attribute, and may send groups.
      </p>
      <CopyField label="SP entity ID (audience)" value={sp.entity_id} copyLabel="Copy entity ID" />
      <CopyField label="ACS URL (reply URL)" value={sp.acs_url} copyLabel="Copy ACS URL" />
      <CopyField
        label="Metadata URL"
        value={sp.metadata_url}
        copyLabel="Copy metadata URL"
        hint="For identity providers that import the service provider's metadata."
      />
    </section>
  );
}

function Certificates({ connection }: { connection: Connection }) {
  return (
    <ul className="certificates" aria-label="Signing certificates in use">
      {connection.idp_certificates.map((c) => (
        <li key={c.sha256_fingerprint} className="certificate">
          <strong>{c.subject || 'Certificate'}</strong>, expires {new Date(c.not_after).toLocaleDateString('en-GB')}
          <span className="fingerprint">SHA-256 {c.sha256_fingerprint}</span>
        </li>
      ))}
    </ul>
  );
}

function SamlForm({ view }: { view: SamlView }) {
  const certsId = useId();
  const save = useSaveSaml();
  const remove = useRemoveSaml();
  const [draft, setDraft] = useState<Draft>(() => draftOf(view.connection));
  const set = (key: keyof Draft) => (value: string) => setDraft((d) => ({ ...d, [key]: value }));
  const errorField = fieldOf(save.error);
  const errorOn = (key: keyof Draft) => (errorField === key ? (save.error as Error).message : undefined);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate({
      idp_entity_id: draft.idpEntityId.trim(),
      sso_url: draft.ssoUrl.trim(),
      idp_certificates: certificatesOf(draft.certificates),
      email_domains: domainsOf(draft.domains),
      admin_group: orNull(draft.adminGroup),
      email_attribute: orNull(draft.emailAttribute),
      groups_attribute: orNull(draft.groupsAttribute),
    });
  };
  const certError = errorOn('certificates');
  return (
    <form className="sso-part" onSubmit={submit} aria-labelledby="saml-idp-heading">
      <h3 id="saml-idp-heading">Your identity provider</h3>
      <TextField
        label="IdP entity ID"
        value={draft.idpEntityId}
        onChange={(e) => set('idpEntityId')(e.target.value)}
        required
        maxLength={1024}
        hint="The Issuer of its assertions (Okta: Identity Provider Issuer; Entra ID: Microsoft Entra Identifier)."
      />
      <TextField
        label="Single sign-on URL"
        type="url"
        value={draft.ssoUrl}
        onChange={(e) => set('ssoUrl')(e.target.value)}
        required
        maxLength={2048}
        error={errorOn('ssoUrl')}
        hint="Where sign-in requests go (HTTP-Redirect binding): https://, or http:// on a loopback address for development."
      />
      <div className="field">
        <label htmlFor={certsId}>Signing certificates</label>
        <textarea
          id={certsId}
          className="pem"
          rows={6}
          spellCheck={false}
          value={draft.certificates}
          onChange={(e) => set('certificates')(e.target.value)}
          required
          aria-invalid={certError ? true : undefined}
          aria-describedby={`${certsId}-hint${certError ? ` ${certsId}-error` : ''}`}
        />
        <p className="hint" id={`${certsId}-hint`}>
          The IdP's signing certificate in PEM (-----BEGIN CERTIFICATE-----). While it rotates, paste the next one below
          the current one (up to three).
        </p>
        {certError && (
          <p className="error" id={`${certsId}-error`}>
            {certError}
          </p>
        )}
      </div>
      {view.connection && <Certificates connection={view.connection} />}
      <TextField
        label="Email domains"
        value={draft.domains}
        onChange={(e) => set('domains')(e.target.value)}
        required
        error={errorOn('domains')}
        hint="Comma-separated. People with these emails sign in through this IdP; a domain belongs to one tenant."
      />
      <TextField
        label="Email attribute"
        value={draft.emailAttribute}
        onChange={(e) => set('emailAttribute')(e.target.value)}
        maxLength={256}
        hint="Optional: the attribute holding the email, when the NameID is not an email address."
      />
      <TextField
        label="Groups attribute"
        value={draft.groupsAttribute}
        onChange={(e) => set('groupsAttribute')(e.target.value)}
        maxLength={256}
        hint="Optional: the attribute holding the user's groups (for example groups)."
      />
      <TextField
        label="Admin group"
        value={draft.adminGroup}
        onChange={(e) => set('adminGroup')(e.target.value)}
        maxLength={256}
        hint="Optional: members of this group are admins, others members; the role follows the IdP at each sign-in."
      />
      {!errorField && <WriteError error={save.error} />}
      <div className="actions">
        <button type="submit" className="button primary" disabled={save.isPending}>
          Save SAML connection
        </button>
        {view.connection && (
          <ConfirmAction
            label="Remove SAML connection"
            question="Remove the SAML connection? Its users keep their accounts but can no longer sign in through it."
            pending={remove.isPending}
            onConfirm={() => remove.mutate(undefined, { onSuccess: () => setDraft(draftOf(null)) })}
          />
        )}
      </div>
      {save.isSuccess && !save.isPending && (
        <p className="notice ok" role="status">
          Saved. People of {save.data.connection?.email_domains.join(', ')} can sign in with SAML; the change is in the
          audit log.
        </p>
      )}
      <WriteError error={remove.error} />
    </form>
  );
}

export function SamlConnection() {
  const saml = useSamlConnection();
  return (
    <section className="card" aria-labelledby="saml-heading">
      <h2 id="saml-heading">SAML 2.0</h2>
      {saml.isPending ? (
        <BlockSkeleton height="24rem" label="the SAML connection" />
      ) : saml.isError ? (
        <ErrorNotice error={saml.error} what="the SAML connection" onRetry={() => saml.refetch()} />
      ) : (
        <>
          <p>
            {saml.data.connection
              ? 'SAML single sign-on is on: people of the domains below sign in through your identity provider.'
              : 'Not configured yet: give your identity provider the values below, then fill in its side.'}
          </p>
          <ServiceProviderFacts sp={saml.data.service_provider} />
          <SamlForm view={saml.data} />
        </>
      )}
    </section>
  );
}
