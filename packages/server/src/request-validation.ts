// How request parts are validated, with Fastify's own Ajv compiler (@fastify/ajv-compiler:
// Ajv 8 with ajv-formats, the module Fastify builds its default validator from). Request
// bodies are JSON and validated strictly ("3" is not a severity); query strings and path
// parameters arrive as text, so only they are coerced to the schema's types. Unknown
// properties are refused by the schemas, never silently removed.

import { AjvCompiler } from '@fastify/ajv-compiler';
import type { FastifySchemaCompiler } from 'fastify';

const AJV_OPTIONS = { removeAdditional: false, useDefaults: true, allErrors: false, strict: false } as const;

export function requestValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const fromPool = AjvCompiler();
  // The pool's functions take the route definition ({schema, httpPart, ...}) as Fastify passes
  // it to any validator compiler; their d.ts declares Ajv's compile(schema) instead.
  const strict = fromPool(
    {},
    { customOptions: { ...AJV_OPTIONS, coerceTypes: false } },
  ) as FastifySchemaCompiler<unknown>;
  const coercing = fromPool(
    {},
    { customOptions: { ...AJV_OPTIONS, coerceTypes: 'array' } },
  ) as FastifySchemaCompiler<unknown>;
  return (route) => (route.httpPart === 'body' ? strict : coercing)(route);
}
