// Guard as a SAML 2.0 service provider: the facts an admin gives their identity provider (one
// set for the whole server: the tenant is found from the request a sign-in answers, never from
// the URL) and the metadata document that carries them.

import { generateServiceProviderMetadata } from '@node-saml/node-saml';

/** The NameID Guard asks for: the user's email address. */
export const NAME_ID_EMAIL = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';

export interface ServiceProvider {
  /** The SP entity ID (the IdP's "audience"): the metadata URL, as is customary. */
  entity_id: string;
  /** Assertion Consumer Service URL (HTTP-POST binding): the IdP's "recipient" and "destination". */
  acs_url: string;
  metadata_url: string;
  name_id_format: string;
}

export function serviceProvider(publicUrl: string): ServiceProvider {
  const metadataUrl = `${publicUrl}/v1/auth/saml/metadata`;
  return {
    entity_id: metadataUrl,
    acs_url: `${publicUrl}/v1/auth/saml/acs`,
    metadata_url: metadataUrl,
    name_id_format: NAME_ID_EMAIL,
  };
}

/** The SP metadata XML: entity ID, ACS URL (HTTP-POST), NameID format, signed assertions wanted. */
export function serviceProviderMetadata(publicUrl: string): string {
  const sp = serviceProvider(publicUrl);
  return generateServiceProviderMetadata({
    issuer: sp.entity_id,
    callbackUrl: sp.acs_url,
    identifierFormat: NAME_ID_EMAIL,
    wantAssertionsSigned: true,
  });
}
