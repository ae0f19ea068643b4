// How Guard's users and SCIM groups are written as SCIM resources (RFC 7643 §4), and what a
// POST or PUT body makes of them.

import type { DirectoryGroup, DirectoryUser } from './directory-repository.ts';
import { type GroupState, memberIds, nameToDisplay, optionalText, type UserState, userName } from './patch.ts';
import { invalidValue, SCHEMA, scimBoolean } from './protocol.ts';

export function userResource(user: DirectoryUser, base: string) {
  return {
    schemas: [SCHEMA.user],
    id: user.id,
    ...(user.external_id !== null ? { externalId: user.external_id } : {}),
    userName: user.email,
    ...(user.display_name !== null ? { displayName: user.display_name, name: { formatted: user.display_name } } : {}),
    emails: [{ value: user.email, type: 'work', primary: true }],
    active: user.deactivated_at === null,
    groups: user.groups.map((g) => ({
      value: g.id,
      display: g.display_name,
      $ref: `${base}/Groups/${g.id}`,
      type: 'direct',
    })),
    meta: { resourceType: 'User', created: user.created_at, location: `${base}/Users/${user.id}` },
  };
}

export function groupResource(group: DirectoryGroup, base: string) {
  return {
    schemas: [SCHEMA.group],
    id: group.id,
    displayName: group.display_name,
    ...(group.external_id !== null ? { externalId: group.external_id } : {}),
    ...(group.members
      ? {
          members: group.members.map((m) => ({
            value: m.id,
            display: m.email,
            $ref: `${base}/Users/${m.id}`,
            type: 'User',
          })),
        }
      : {}),
    meta: {
      resourceType: 'Group',
      created: group.created_at,
      lastModified: group.updated_at,
      location: `${base}/Groups/${group.id}`,
    },
  };
}

/** A User of a POST or PUT body (RFC 7644 §3.3, §3.5.1): userName required, active defaults to true. */
export function userFromBody(body: Record<string, unknown>): UserState {
  return {
    userName: userName(body.userName),
    displayName: optionalText(body.displayName, 'displayName') ?? nameToDisplay(body.name),
    externalId: optionalText(body.externalId, 'externalId'),
    active: body.active === undefined ? true : scimBoolean(body.active, 'active'),
  };
}

/** A Group of a POST or PUT body: displayName required, members optional. */
export function groupFromBody(body: Record<string, unknown>): GroupState {
  const displayName = optionalText(body.displayName, 'displayName');
  if (!displayName) throw invalidValue('displayName is required');
  return {
    displayName,
    externalId: optionalText(body.externalId, 'externalId'),
    members: body.members === undefined ? [] : [...new Set(memberIds(body.members))],
  };
}
