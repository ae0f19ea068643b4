// The tenant's OpenID Connect provider: the redirect URI to register there, and the form that
// connects it (issuer, client, secret, email domains, admin group). The secret is sent, never
// shown: once stored, the field may stay empty to keep it.

import { type FormEvent, useState } from 'react';
import { ConfirmAction } from '../../../components/confirm-action.tsx';
import { CopyField } from '../../../components/copy-field.tsx';
import { BlockSkeleton, ErrorNotice, WriteError } from '../../../components/query-states.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { ApiError } from '../../../lib/api-client.ts';
import { useOidcConnection, useRemoveOidcConnection, useSaveOidcConnection } from '../api/sso.ts';
import { domainsProblem, issuerProblem, parseDomains } from '../sso-form-rules.ts';

interface Draft {
  issuer: string;
  clientId: string;
  clientSecret: string;
  domains: string;
  adminGroup: string;
}

/** The server's refusal, on the field it concerns (others show above the buttons). */
function fieldOf(error: unknown): 'issuer' | 'domains' | undefined {
  if (!(error instanceof ApiError)) return undefined;
  if (error.code === 'invalid_issuer') return 'issuer';
  if (error.code === 'domain_taken') return 'domains';
  return undefined;
}

export function OidcConnection() {
  const connection = useOidcConnection();
  const save = useSaveOidcConnection();
  const remove = useRemoveOidcConnection();
  const [draft, setDraft] = useState<Draft>();
  const [checked, setChecked] = useState(false);
  if (connection.isPending) return <BlockSkeleton height="28rem" label="the OpenID Connect settings" />;
  if (connection.isError)
    return (
      <ErrorNotice error={connection.error} what="the OpenID Connect settings" onRetry={() => connection.refetch()} />
    );
  const c = connection.data;
  const shown: Draft = draft ?? {
    issuer: c.issuer ?? '',
    clientId: c.client_id ?? '',
    clientSecret: '',
    domains: c.email_domains.join(', '),
    adminGroup: c.admin_group ?? '',
  };
  const edit = (change: Partial<Draft>) => {
    setDraft({ ...shown, ...change });
    save.reset();
  };
  const domains = parseDomains(shown.domains);
  const problems = {
    issuer: issuerProblem(shown.issuer),
    clientId: shown.clientId.trim() ? undefined : 'Enter the client ID the provider gave Guard.',
    clientSecret:
      shown.clientSecret || (c.has_client_secret && shown.issuer.trim() === c.issuer)
        ? undefined
        : c.has_client_secret
          ? 'The issuer changed: enter the client secret again (the stored one is sent to no other issuer).'
          : 'Enter the client secret the provider gave Guard.',
    domains: domainsProblem(domains),
  };
  const serverField = fieldOf(save.error);
  const serverMessage = save.error instanceof Error ? save.error.message : undefined;
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    setChecked(true);
    if (Object.values(problems).some(Boolean)) return;
    save.mutate(
      {
        issuer: shown.issuer.trim(),
        client_id: shown.clientId.trim(),
        ...(shown.clientSecret ? { client_secret: shown.clientSecret } : {}),
        email_domains: domains,
        admin_group: shown.adminGroup.trim() || null,
      },
      { onSuccess: () => setDraft(undefined) },
    );
  };
  return (
    <section className="card" aria-labelledby="oidc-heading">
      <h2 id="oidc-heading">OpenID Connect</h2>
      <p>
        People whose email is of one of these domains sign in at your identity provider (Okta, Microsoft Entra ID,
        Google Workspace, Keycloak…) and arrive signed in: new people become members, people in the admin group become
        admins. Register Guard at the provider as a web application with this redirect URI:
      </p>
      <form className="form" onSubmit={onSubmit} noValidate>
        <CopyField label="Redirect URI" value={c.redirect_uri} copyLabel="Copy redirect URI" />
        <TextField
          label="Issuer URL"
          type="url"
          value={shown.issuer}
          onChange={(e) => edit({ issuer: e.target.value })}
          hint="The provider’s issuer; Guard reads its discovery document (/.well-known/openid-configuration) when you save."
          error={(checked && problems.issuer) || (serverField === 'issuer' ? serverMessage : undefined)}
        />
        <TextField
          label="Client ID"
          value={shown.clientId}
          autoComplete="off"
          onChange={(e) => edit({ clientId: e.target.value })}
          error={checked ? problems.clientId : undefined}
        />
        <TextField
          label="Client secret"
          type="password"
          autoComplete="new-password"
          value={shown.clientSecret}
          onChange={(e) => edit({ clientSecret: e.target.value })}
          hint={
            c.has_client_secret
              ? 'A secret is stored (it is never shown). Leave this empty to keep it, unless the issuer changes.'
              : 'Stored encrypted; it is never shown again.'
          }
          error={checked ? problems.clientSecret : undefined}
        />
        <TextField
          label="Email domains"
          value={shown.domains}
          autoComplete="off"
          onChange={(e) => edit({ domains: e.target.value })}
          hint="Separated by commas, e.g. example.com, example.org. Each domain can sign in to one Guard tenant only."
          error={(checked && problems.domains) || (serverField === 'domains' ? serverMessage : undefined)}
        />
        <TextField
          label="Admin group"
          value={shown.adminGroup}
          autoComplete="off"
          onChange={(e) => edit({ adminGroup: e.target.value })}
          hint="Optional. Members of this group (the provider’s groups claim) are admins; others are members."
        />
        {save.error && !serverField ? <WriteError error={save.error} /> : null}
        {save.isSuccess && (
          <p className="notice ok" role="status">
            Saved. People of {save.data.email_domains.join(', ')} can now sign in with SSO.
          </p>
        )}
        <div className="actions">
          <button type="submit" className="button primary" disabled={save.isPending}>
            Save
          </button>
          {c.configured && (
            <ConfirmAction
              label="Remove"
              question="Remove the OpenID Connect connection? Its people then sign in with a password (an admin can send them set-password links)."
              pending={remove.isPending}
              onConfirm={() => remove.mutate(undefined, { onSuccess: () => setDraft(undefined) })}
            />
          )}
        </div>
        <WriteError error={remove.error} />
      </form>
    </section>
  );
}
