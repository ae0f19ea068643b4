import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { copyDeclared, fieldName, firstFault } from './schema-check.ts';
import { ApiErrorBody, UploadUrlResponse } from './wire.ts';

const presigned = { url: 'https://s3.example/b/k?sig=1', object_key: 'k', expires_at: '2026-11-21T10:15:00Z' };

describe('firstFault', () => {
  test('finds nothing wrong with a value that fits', () => {
    assert.equal(firstFault(UploadUrlResponse, presigned), undefined);
    assert.equal(firstFault(UploadUrlResponse, { ...presigned, headers: { 'x-amz-checksum-sha256': 'q' } }), undefined);
  });

  test('names a missing required property by its own path', () => {
    const { url: _, ...noUrl } = presigned;
    assert.deepEqual(firstFault(UploadUrlResponse, noUrl)?.path, ['url']);
  });

  test('names the field of a wrong type, a wrong format and a map entry', () => {
    assert.deepEqual(firstFault(UploadUrlResponse, { ...presigned, object_key: 7 })?.path, ['object_key']);
    assert.deepEqual(firstFault(UploadUrlResponse, { ...presigned, expires_at: 'soon' })?.path, ['expires_at']);
    assert.deepEqual(firstFault(UploadUrlResponse, { ...presigned, headers: { 'a/b': 1 } })?.path, ['headers', 'a/b']);
  });

  test('reports the first fault in the order the schema declares its properties', () => {
    assert.deepEqual(firstFault(UploadUrlResponse, { url: 1, object_key: 2, expires_at: 3 })?.path, ['url']);
  });

  test('names the whole value when it is not an object, and indexes into arrays as numbers', () => {
    assert.deepEqual(firstFault(ApiErrorBody, [])?.path, []);
    const list = { type: 'array', items: { type: 'object', properties: { n: { type: 'integer' } } } } as const;
    assert.deepEqual(firstFault(list, [{ n: 1 }, { n: 'x' }])?.path, [1, 'n']);
  });

  test('carries TypeBox words for what is wrong', () => {
    assert.match(firstFault(ApiErrorBody, { error: { code: 1, message: 'm' } })?.message ?? '', /string/);
  });
});

test('fieldName writes paths as a reader would', () => {
  assert.equal(fieldName([]), '');
  assert.equal(fieldName(['url']), 'url');
  assert.equal(fieldName(['contents', 0, 'name']), 'contents[0].name');
  assert.equal(fieldName(['redaction', 'extra_keys', 1]), 'redaction.extra_keys[1]');
});

describe('copyDeclared', () => {
  test('keeps declared properties and every key of a map, drops the rest', () => {
    const value = { ...presigned, headers: { a: 'b', c: 'd' }, note: 'x' };
    assert.deepEqual(copyDeclared(UploadUrlResponse, value), { ...presigned, headers: { a: 'b', c: 'd' } });
  });

  test('returns fresh objects and arrays', () => {
    const value = { ...presigned, headers: { a: 'b' } };
    const copy = copyDeclared(UploadUrlResponse, value);
    assert.notEqual(copy, value);
    assert.notEqual(copy.headers, value.headers);
  });
});
