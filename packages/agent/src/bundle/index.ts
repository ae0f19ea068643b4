// Support bundles as files: building one (`support-bundle collect`: sources, redaction, the
// archive and its manifest) and reading one back against its manifest. What other folders
// may use of it (the upload benchmark builds a bundle of its own from the same pieces):

export { memberHeader } from './archive.ts';
export { type CollectOptions, type CollectResult, collectBundle, obfuscationMapPath } from './collect.ts';
export { buildManifest, manifestBytes } from './manifest.ts';
export { type PreviewOptions, previewBundle } from './preview.ts';
export { verifyBundle } from './read-archive.ts';
export { RevealStream, readObfuscationMap } from './reveal.ts';
export { HOST_SOURCES } from './system-info.ts';
