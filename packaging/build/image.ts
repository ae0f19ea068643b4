// The server's container image (DESIGN §8, issue 23): in progress on main; the signature is fixed.

/** A Debian package whose files are in the image, as the SBOM lists it. */
export interface DebianPackage {
  name: string;
  version: string;
  architecture: string;
  /** SHA-256 of the .deb it was unpacked from. */
  sha256: string;
}

export interface ServerImage {
  /** dist/guard-server-<version>.image.tar */
  path: string;
  /** The Debian packages unpacked into its root file system. */
  debianPackages: DebianPackage[];
}

/** Builds the image archive unless it is fresh; returns it and what it holds. */
export async function ensureServerImage(_force = false): Promise<ServerImage> {
  throw new Error('the server image build is not written yet');
}
