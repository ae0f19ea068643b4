// What the service provider tells a client about itself (RFC 7644 §4): its configuration,
// resource types and schemas, as Okta and Microsoft Entra ID read them when an app is
// connected. They describe what Guard keeps (patch.ts): the other attributes a provider sends
// are accepted and ignored.

import { MAX_PAGE_SIZE, SCHEMA } from './protocol.ts';

export function serviceProviderConfig(base: string) {
  return {
    schemas: [SCHEMA.serviceProviderConfig],
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_PAGE_SIZE },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'Bearer token',
        description: 'A SCIM token (gsc_…) made by an admin in Settings > Users',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  };
}

export function resourceTypes(base: string) {
  return [
    {
      schemas: [SCHEMA.resourceType],
      id: 'User',
      name: 'User',
      endpoint: '/Users',
      description: 'A person of the tenant, who signs in to the console through single sign-on',
      schema: SCHEMA.user,
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/User` },
    },
    {
      schemas: [SCHEMA.resourceType],
      id: 'Group',
      name: 'Group',
      endpoint: '/Groups',
      description: "A group of the tenant's users; the tenant's SSO admin group makes its members admins",
      schema: SCHEMA.group,
      meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/Group` },
    },
  ];
}

function attribute(
  name: string,
  description: string,
  options: {
    type?: string;
    required?: boolean;
    mutability?: string;
    uniqueness?: string;
    caseExact?: boolean;
    multiValued?: boolean;
    subAttributes?: object[];
    returned?: string;
  } = {},
) {
  const type = options.type ?? 'string';
  return {
    name,
    type,
    multiValued: options.multiValued ?? false,
    description,
    required: options.required ?? false,
    ...(type === 'string' || type === 'reference' ? { caseExact: options.caseExact ?? false } : {}),
    mutability: options.mutability ?? 'readWrite',
    returned: options.returned ?? 'default',
    uniqueness: options.uniqueness ?? 'none',
    ...(options.subAttributes ? { subAttributes: options.subAttributes } : {}),
  };
}

export function schemas(base: string) {
  return [
    {
      schemas: [SCHEMA.schema],
      id: SCHEMA.user,
      name: 'User',
      description: 'User Account',
      attributes: [
        attribute('userName', "The user's email address: what they sign in with (stored lowercased)", {
          required: true,
          uniqueness: 'server',
        }),
        attribute('name', "The user's name; Guard keeps it as the display name", {
          type: 'complex',
          subAttributes: [
            attribute('formatted', 'The full name'),
            attribute('givenName', 'Given name'),
            attribute('familyName', 'Family name'),
          ],
        }),
        attribute('displayName', 'The name shown in the console'),
        attribute('active', 'false deactivates the user: their sessions and API tokens end', {
          type: 'boolean',
        }),
        attribute('emails', 'The email is userName', {
          type: 'complex',
          multiValued: true,
          mutability: 'readOnly',
          subAttributes: [attribute('value', 'The email address'), attribute('type', 'work')],
        }),
        attribute('groups', "The user's groups", {
          type: 'complex',
          multiValued: true,
          mutability: 'readOnly',
          subAttributes: [attribute('value', 'The group id'), attribute('display', 'The group displayName')],
        }),
      ],
      meta: { resourceType: 'Schema', location: `${base}/Schemas/${SCHEMA.user}` },
    },
    {
      schemas: [SCHEMA.schema],
      id: SCHEMA.group,
      name: 'Group',
      description: 'Group',
      attributes: [
        attribute('displayName', 'The group name (unique in the tenant)', { required: true, uniqueness: 'server' }),
        attribute('members', 'The users of the group', {
          type: 'complex',
          multiValued: true,
          subAttributes: [
            attribute('value', 'The user id', { mutability: 'immutable' }),
            attribute('display', 'The user email', { mutability: 'readOnly' }),
          ],
        }),
      ],
      meta: { resourceType: 'Schema', location: `${base}/Schemas/${SCHEMA.group}` },
    },
  ];
}
