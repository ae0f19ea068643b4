// The signing secret of a just-created endpoint, handed from the create form to the
// endpoint's page and shown there once. Only in this module's memory: never in the query
// cache, storage, the URL or history state (which survives a reload), so it is gone once
// the page is left or reloaded. The page takes it when it mounts and drops it when it leaves.

const secrets = new Map<string, string>();

export function rememberSecret(endpointId: string, secret: string): void {
  secrets.set(endpointId, secret);
}

export function peekSecret(endpointId: string): string | undefined {
  return secrets.get(endpointId);
}

export function forgetSecret(endpointId: string): void {
  secrets.delete(endpointId);
}
