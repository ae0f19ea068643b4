// PATCH (RFC 7644 §3.5.2) as Okta and Microsoft Entra ID send it, applied to a resource's
// state in memory: pure functions from the state before and the operations to the state after
// (the repository then writes the difference). Both providers' shapes are taken:
//   - `{"op": "replace", "value": {"active": false}}` (Okta: no path, an object of attributes);
//   - `{"op": "Replace", "path": "active", "value": "False"}` (Entra: a capitalised op, a path,
//     booleans sometimes as strings);
//   - `{"op": "remove", "path": "members[value eq \"<id>\"]"}` (Okta) and
//     `{"op": "Remove", "path": "members", "value": [{"value": "<id>"}]}` (Entra).
// Attributes Guard does not keep (title, phone numbers, the enterprise extension…) are
// ignored, as RFC 7644 lets a service provider do for attributes it does not support, so that a
// provider's default attribute mappings work as they are; what Guard keeps is validated.

import { invalidValue, ScimError, scimBoolean } from './protocol.ts';

export interface PatchOperation {
  op: string;
  path?: string;
  value?: unknown;
}

/** What Guard keeps of a SCIM User. */
export interface UserState {
  /** The email the user signs in with, lowercased. */
  userName: string;
  displayName: string | null;
  externalId: string | null;
  active: boolean;
}

/** What Guard keeps of a SCIM Group. */
export interface GroupState {
  displayName: string;
  externalId: string | null;
  /** Ids of the member users, in no particular order, each once. */
  members: string[];
}

export const MAX_TEXT = 256;
export const MAX_EMAIL = 254;
/** A group's members, at most (a larger directory group is not an admin group of a console). */
export const MAX_GROUP_MEMBERS = 10_000;

const EMAIL = /^[^\s@]+@[^\s@]+$/;
const CORE_USER = 'urn:ietf:params:scim:schemas:core:2.0:user:';
const CORE_GROUP = 'urn:ietf:params:scim:schemas:core:2.0:group:';

type Op = 'add' | 'replace' | 'remove';

function opOf(operation: PatchOperation): Op {
  const op = operation.op.toLowerCase();
  if (op === 'add' || op === 'replace' || op === 'remove') return op;
  throw new ScimError(400, `unknown PATCH op ${JSON.stringify(operation.op)}: add, replace or remove`, 'invalidSyntax');
}

/** A path lowercased, without the core schema's URN prefix. */
function attributePath(path: string, core: string): string {
  const p = path.trim().toLowerCase();
  return p.startsWith(core) ? p.slice(core.length) : p;
}

export function userName(value: unknown): string {
  if (typeof value !== 'string' || value.length > MAX_EMAIL || !EMAIL.test(value.trim()))
    throw invalidValue("userName must be the user's email address (at most 254 characters)");
  return value.trim().toLowerCase();
}

export function optionalText(value: unknown, attribute: string): string | null {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value !== 'string' || value.length > MAX_TEXT)
    throw invalidValue(`${attribute} must be a string of at most ${MAX_TEXT} characters`);
  return value;
}

/** A display name from SCIM's `name` complex attribute: formatted, or given and family names. */
export function nameToDisplay(name: unknown): string | null {
  if (typeof name !== 'object' || name === null) return null;
  const n = name as { formatted?: unknown; givenName?: unknown; familyName?: unknown };
  const formatted = optionalText(n.formatted, 'name.formatted');
  if (formatted) return formatted;
  const parts = [optionalText(n.givenName, 'name.givenName'), optionalText(n.familyName, 'name.familyName')];
  return optionalText(parts.filter(Boolean).join(' '), 'name');
}

/** The user after `operations`, applied in order. */
export function patchUser(before: UserState, operations: readonly PatchOperation[]): UserState {
  const user = { ...before };
  // Name parts sent one path at a time (`name.givenName`, `name.familyName`) are joined once
  // all operations are read, unless a displayName was sent too.
  const name: Record<string, unknown> = {};
  let displayNameSent = false;
  const set = (path: string, value: unknown) => {
    switch (path) {
      case 'active':
        user.active = scimBoolean(value, 'active');
        return;
      case 'username':
        user.userName = userName(value);
        return;
      case 'displayname':
        user.displayName = optionalText(value, 'displayName');
        displayNameSent = true;
        return;
      case 'externalid':
        user.externalId = optionalText(value, 'externalId');
        return;
      case 'name':
        if (typeof value === 'object' && value !== null) Object.assign(name, value);
        return;
      case 'name.givenname':
        name.givenName = value;
        return;
      case 'name.familyname':
        name.familyName = value;
        return;
      case 'name.formatted':
        name.formatted = value;
        return;
      default:
        return; // an attribute Guard does not keep (emails follow userName: see docs/identity.md)
    }
  };
  for (const operation of operations) {
    const op = opOf(operation);
    if (op === 'remove') {
      if (operation.path === undefined) throw new ScimError(400, 'a remove operation needs a path', 'noTarget');
      const path = attributePath(operation.path, CORE_USER);
      if (path === 'username' || path === 'active')
        throw new ScimError(400, `${operation.path} cannot be removed`, 'mutability');
      if (path === 'displayname' || path === 'externalid') set(path, null);
      continue;
    }
    if (operation.path !== undefined) {
      set(attributePath(operation.path, CORE_USER), operation.value);
      continue;
    }
    if (typeof operation.value !== 'object' || operation.value === null || Array.isArray(operation.value))
      throw invalidValue('an operation without a path takes an object of attributes as its value');
    for (const [key, value] of Object.entries(operation.value)) set(attributePath(key, CORE_USER), value);
  }
  if (!displayNameSent && Object.keys(name).length > 0) user.displayName = nameToDisplay(name) ?? user.displayName;
  return user;
}

const MEMBER_FILTER = /^members\s*\[\s*value\s+eq\s+("(?:[^"\\]|\\.)*")\s*\]$/i;

/** Member ids of a `members` value: an array of `{value: "<user id>"}`. */
export function memberIds(value: unknown): string[] {
  if (!Array.isArray(value)) throw invalidValue('members must be an array of {"value": "<user id>"}');
  if (value.length > MAX_GROUP_MEMBERS) throw new ScimError(400, `at most ${MAX_GROUP_MEMBERS} members`, 'tooMany');
  return value.map((m) => {
    const id = (m as { value?: unknown } | null)?.value;
    if (typeof id !== 'string' || id.length === 0 || id.length > 64)
      throw invalidValue('each member is {"value": "<user id>"}');
    return id;
  });
}

/** The group after `operations`, applied in order. */
export function patchGroup(before: GroupState, operations: readonly PatchOperation[]): GroupState {
  const group = { ...before, members: [...before.members] };
  const members = new Set(group.members);
  const set = (op: 'add' | 'replace', path: string, value: unknown) => {
    switch (path) {
      case 'displayname': {
        const name = optionalText(value, 'displayName');
        if (!name) throw invalidValue('displayName must not be empty');
        group.displayName = name;
        return;
      }
      case 'externalid':
        group.externalId = optionalText(value, 'externalId');
        return;
      case 'members':
        if (op === 'replace') members.clear();
        for (const id of memberIds(value)) members.add(id);
        return;
      default:
        return; // id, meta, an extension: nothing Guard keeps
    }
  };
  for (const operation of operations) {
    const op = opOf(operation);
    if (op === 'remove') {
      if (operation.path === undefined) throw new ScimError(400, 'a remove operation needs a path', 'noTarget');
      const filtered = MEMBER_FILTER.exec(operation.path.trim());
      if (filtered) {
        members.delete(JSON.parse(filtered[1]) as string);
        continue;
      }
      const path = attributePath(operation.path, CORE_GROUP);
      if (path === 'members') {
        if (operation.value === undefined) members.clear();
        else for (const id of memberIds(operation.value)) members.delete(id);
      } else if (path === 'externalid') group.externalId = null;
      else if (path === 'displayname') throw new ScimError(400, 'displayName cannot be removed', 'mutability');
      else if (path.startsWith('members'))
        throw new ScimError(400, `unsupported path ${operation.path}`, 'invalidPath');
      continue;
    }
    if (operation.path !== undefined) {
      set(op, attributePath(operation.path, CORE_GROUP), operation.value);
      continue;
    }
    if (typeof operation.value !== 'object' || operation.value === null || Array.isArray(operation.value))
      throw invalidValue('an operation without a path takes an object of attributes as its value');
    for (const [key, value] of Object.entries(operation.value)) set(op, attributePath(key, CORE_GROUP), value);
  }
  if (members.size > MAX_GROUP_MEMBERS) throw new ScimError(400, `at most ${MAX_GROUP_MEMBERS} members`, 'tooMany');
  group.members = [...members];
  return group;
}
