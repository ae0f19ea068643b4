// Opening a file that collect reads (DESIGN §3, contract — what collect reads): without
// following a symlink in the last component and without blocking (O_NOFOLLOW | O_NONBLOCK),
// then checked by fstat of the opened descriptor, so what is checked is what is read.
// Directories above the file may be symlinks: they are the operator's layout.

import { constants } from 'node:fs';
import { type FileHandle, lstat, open } from 'node:fs/promises';

/** What a path was instead of a regular file. */
export type NotRegularKind = 'symbolic link' | 'FIFO' | 'socket' | 'character device' | 'block device' | 'directory';

/** The path is not a regular file (or is a symlink that was not followed); nothing was read. */
export class NotRegularFileError extends Error {
  readonly path: string;
  readonly kind: NotRegularKind | 'special file';
  constructor(path: string, kind: NotRegularKind | 'special file') {
    super(
      kind === 'symbolic link'
        ? 'a symbolic link; collect never follows links'
        : `not a regular file (${kind === 'special file' ? kind : `a ${kind}`})`,
    );
    this.name = 'NotRegularFileError';
    this.path = path;
    this.kind = kind;
  }
}

/**
 * Opens `path` read-only when it is a regular file. Throws NotRegularFileError for a symlink
 * in the last component (unless `followLinks`), a FIFO, socket, device or directory; throws
 * the system error (ENOENT, EACCES...) otherwise. Never blocks on a FIFO.
 */
export async function openRegularFile(path: string, options: { followLinks?: boolean } = {}): Promise<FileHandle> {
  const flags = constants.O_RDONLY | constants.O_NONBLOCK | (options.followLinks ? 0 : constants.O_NOFOLLOW);
  let file: FileHandle;
  try {
    file = await open(path, flags);
  } catch (error) {
    // ELOOP: the last component is a symlink (O_NOFOLLOW). ENXIO: a socket, which open()
    // refuses. Name what is there, from lstat, which follows nothing.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENXIO') {
      const kind = await lstat(path).then(kindOf, () => undefined);
      if (kind) throw new NotRegularFileError(path, kind);
    }
    throw error;
  }
  try {
    const stats = await file.stat();
    if (!stats.isFile()) throw new NotRegularFileError(path, kindOf(stats) ?? 'special file');
    return file;
  } catch (error) {
    await file.close();
    throw error;
  }
}

/** Kind of a non-regular file from its stats; undefined for a regular file. */
export function kindOf(stats: {
  isFile(): boolean;
  isSymbolicLink(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
  isDirectory(): boolean;
}): NotRegularKind | 'special file' | undefined {
  if (stats.isFile()) return undefined;
  if (stats.isSymbolicLink()) return 'symbolic link';
  if (stats.isFIFO()) return 'FIFO';
  if (stats.isSocket()) return 'socket';
  if (stats.isCharacterDevice()) return 'character device';
  if (stats.isBlockDevice()) return 'block device';
  if (stats.isDirectory()) return 'directory';
  return 'special file';
}
