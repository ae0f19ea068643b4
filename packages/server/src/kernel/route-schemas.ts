// Schemas that many routes share: the `{id}` path parameter and the error responses.
// Route-specific request and response schemas live beside their routes.

import { ApiErrorBody } from '@guard/contract';
import { Type } from 'typebox';

/** `/{id}` of any resource: ids are short prefixed random strings. */
export const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

/** Every 4xx answer is `{"error": {"code", "message"}}` (errors.ts). */
export const ErrorResponses = { '4xx': ApiErrorBody };
