import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { csvCell, csvHeader, csvRecord, exportFilename, exportLine } from './export-format.ts';

describe('audit export format', () => {
  it('leaves plain cells as they are and writes null as empty', () => {
    assert.equal(csvCell('user.create'), 'user.create');
    assert.equal(csvCell(null), '');
    assert.equal(csvCell(''), '');
  });

  it('quotes commas, quotes and line breaks per RFC 4180', () => {
    assert.equal(csvCell('a,b'), '"a,b"');
    assert.equal(csvCell('say "hi"'), '"say ""hi"""');
    assert.equal(csvCell('two\nlines'), '"two\nlines"');
    assert.equal(csvCell('cr\rhere'), '"cr\rhere"');
  });

  it('neutralises cells a spreadsheet would read as formulas', () => {
    assert.equal(csvCell('=HYPERLINK("http://x")'), '"\'=HYPERLINK(""http://x"")"');
    assert.equal(csvCell('+1'), "'+1");
    assert.equal(csvCell('-2+3'), "'-2+3");
    assert.equal(csvCell('@SUM(A1)'), "'@SUM(A1)");
    assert.equal(csvCell('\tx'), "'\tx");
    assert.equal(csvCell('\rx'), '"\'\rx"');
    assert.equal(csvCell('a=b'), 'a=b');
  });

  it('ends records with CRLF and heads the file with the column names', () => {
    assert.equal(csvRecord(['a', null, 'c']), 'a,,c\r\n');
    assert.equal(csvHeader(), 'id,at,actor_id,actor_email,actor_role,tenant_id,action,target\r\n');
  });

  it('writes one JSON object per line', () => {
    const entry = {
      id: 'au_1',
      at: '2026-11-21T10:00:00.000Z',
      actor_id: 'usr_1',
      actor_email: null,
      actor_role: 'admin',
      tenant_id: 'ten_1',
      action: 'user.create',
      target: 'line\nbreak',
    };
    const line = exportLine('jsonl', entry);
    assert.ok(line.endsWith('\n'));
    assert.equal(line.split('\n').length, 2);
    assert.deepEqual(JSON.parse(line), entry);
  });

  it('names the file by tenant and date', () => {
    const at = new Date('2026-11-21T23:59:00Z');
    assert.equal(exportFilename('csv', 'ten_abc', at), 'guard-audit-ten_abc-2026-11-21.csv');
    assert.equal(exportFilename('jsonl', null, at), 'guard-audit-all-tenants-2026-11-21.jsonl');
  });
});
