// Moving a deployment's data: `guard-server export` writes the embedded deployment (SQLite
// rows, objects, master key) as one streamed archive; `guard-server import` reads it into an
// empty target (PostgreSQL or SQLite, and any object store).
export { ARCHIVE_FORMAT, ARCHIVE_VERSION, type ArchiveManifest, TABLES } from './archive-format.ts';
export { exportData, type TransferSummary } from './export.ts';
export { ImportError, importData } from './import.ts';
