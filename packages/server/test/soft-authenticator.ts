// A software WebAuthn authenticator for API tests: it answers registration and authentication
// options as a browser and a platform authenticator would (WebAuthn L3 §6), with a P-256 key per
// credential (node:crypto), "none" attestation, and the CBOR it needs written by hand. Tests can
// make it misbehave: sign another challenge or origin, skip user verification, report a counter.

import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';

// --- the little CBOR (RFC 8949) a COSE key and an attestation object need --------------------

type Cbor = number | string | Uint8Array | Map<Cbor, Cbor> | { [key: string]: Cbor };

function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
  if (n < 0x10000) return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff]);
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(n, 1);
  return b;
}

export function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  const entries = value instanceof Map ? [...value.entries()] : Object.entries(value);
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

// --- the authenticator -------------------------------------------------------------------------

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest();
const b64u = (data: Buffer) => data.toString('base64url');

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

export interface SoftCredential {
  id: string;
  privateKey: KeyObject;
  /** The user handle the relying party gave (base64url). */
  userHandle: string;
  counter: number;
}

export interface Misbehaviour {
  /** Sign this challenge instead of the one asked for. */
  challenge?: string;
  /** Claim this origin instead of the authenticator's. */
  origin?: string;
  /** Answer without user verification (UV flag off). */
  userVerified?: boolean;
  /** Report this signature counter instead of the next one. */
  counter?: number;
  /** Answer with this user handle (base64url) instead of the credential's. */
  userHandle?: string;
}

// biome-ignore lint/suspicious/noExplicitAny: WebAuthn option and response JSON, as the API sends and takes it
type Json = any;

export class SoftAuthenticator {
  readonly rpId: string;
  readonly origin: string;
  readonly credentials = new Map<string, SoftCredential>();

  constructor(publicUrl: string) {
    const url = new URL(publicUrl);
    this.rpId = url.hostname;
    this.origin = url.origin;
  }

  #authData(flags: number, counter: number, attested?: Buffer): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    return Buffer.concat([sha256(this.rpId), Buffer.from([flags]), count, ...(attested ? [attested] : [])]);
  }

  #clientData(type: string, challenge: string, origin: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** navigator.credentials.create(): a new P-256 credential for these registration options. */
  create(options: Json, bad: Misbehaviour = {}): Json {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const coseKey = cbor(
      new Map<Cbor, Cbor>([
        [1, 2], // kty: EC2
        [3, -7], // alg: ES256
        [-1, 1], // crv: P-256
        [-2, Buffer.from(jwk.x ?? '', 'base64url')],
        [-3, Buffer.from(jwk.y ?? '', 'base64url')],
      ]),
    );
    const id = randomBytes(32);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(id.length);
    const attested = Buffer.concat([Buffer.alloc(16), idLength, id, coseKey]);
    const flags = FLAG_UP | FLAG_AT | (bad.userVerified === false ? 0 : FLAG_UV);
    const authData = this.#authData(flags, 0, attested);
    const clientDataJSON = this.#clientData(
      'webauthn.create',
      bad.challenge ?? options.challenge,
      bad.origin ?? this.origin,
    );
    const credential = { id: b64u(id), privateKey, userHandle: options.user.id, counter: 0 };
    this.credentials.set(credential.id, credential);
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64u(clientDataJSON),
        attestationObject: b64u(cbor({ fmt: 'none', attStmt: {}, authData })),
        transports: ['internal'],
      },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
    };
  }

  /** navigator.credentials.get() with one of this authenticator's credentials. */
  get(options: Json, credentialId: string, bad: Misbehaviour = {}): Json {
    const credential = this.credentials.get(credentialId);
    if (!credential) throw new Error(`no credential ${credentialId}`);
    credential.counter = bad.counter ?? credential.counter + 1;
    const flags = FLAG_UP | (bad.userVerified === false ? 0 : FLAG_UV);
    const authData = this.#authData(flags, credential.counter);
    const clientDataJSON = this.#clientData(
      'webauthn.get',
      bad.challenge ?? options.challenge,
      bad.origin ?? this.origin,
    );
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), credential.privateKey);
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64u(clientDataJSON),
        authenticatorData: b64u(authData),
        signature: b64u(signature),
        userHandle: bad.userHandle ?? credential.userHandle,
      },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
    };
  }
}
