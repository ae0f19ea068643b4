// The schema the migrations make is the one src/db/tables.ts declares, on this run's engine:
// every table of its `Database` interface exists with exactly the columns its interface lists,
// each nullable exactly when its type allows null, and no other table or column exists (but
// Kysely's own migration tables, and on PostgreSQL the partitions of the partitioned tables).
// Interfaces are gone at run time, so tables.ts is read as text, by a reader that knows the
// few forms that file uses and refuses anything else. Also: every file of src/db/migrations/
// is a migration listed under its own name (a file forgotten in the list would never run).

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it, test } from 'node:test';
import { sql } from 'kysely';
import { MIGRATION_NAMES } from '../src/db/index.ts';
import { SERVER_DIR } from './harness.ts';
import { ON_POSTGRES, openTestDatabase, type TestDatabase } from './test-database.ts';

const DB_DIR = join(SERVER_DIR, 'src', 'db');
const KYSELY_TABLES = ['kysely_migration', 'kysely_migration_lock'];
/** Partitioned on PostgreSQL by migration 0002 (monthly partitions: webhooks/delivery-partitions-postgres.ts). */
const PARTITIONED = ['webhook_deliveries', 'webhook_attempts'];
/** Files of src/db/migrations/ that are not migrations. */
const MIGRATION_HELPERS = ['column-types.ts'];

interface Column {
  name: string;
  nullable: boolean;
}

/** Table name → its columns, sorted by name. */
type Schema = Map<string, Column[]>;

const byName = (a: Column, b: Column) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * Reads the tables of `Database` from the text of tables.ts. A member is `name: type;` or
 * `name?: type;` on one line; a type is a union of `string`, `number`, `null`, string literals
 * and aliases declared in the file as unions without null, or `Generated<…>` of such a union.
 * Throws on anything else, naming what it could not read.
 */
function declaredSchema(source: string): Schema {
  const text = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/[^\n]*/g, '');
  const aliases = new Map<string, string>();
  for (const m of text.matchAll(/export type (\w+) =([^;]+);/g)) aliases.set(m[1], m[2]);
  const interfaces = new Map<string, Map<string, string>>();
  const interfaceCount = [...text.matchAll(/\binterface\b/g)].length;
  for (const m of text.matchAll(/export interface (\w+) \{([^{}]*)\}/g)) {
    const members = new Map<string, string>();
    for (const raw of m[2].split('\n')) {
      const line = raw.trim();
      if (line === '') continue;
      const member = /^(\w+)\??: ([^;]+);$/.exec(line);
      if (!member) throw new Error(`tables.ts: cannot read "${line}" in interface ${m[1]}`);
      if (members.has(member[1])) throw new Error(`tables.ts: ${m[1]}.${member[1]} is declared twice`);
      members.set(member[1], member[2]);
    }
    interfaces.set(m[1], members);
  }
  if (interfaces.size !== interfaceCount)
    throw new Error(`tables.ts: read ${interfaces.size} of its ${interfaceCount} interfaces (nested braces?)`);

  const nullable = (where: string, type: string): boolean => {
    const generated = /^Generated<([^<>]+)>$/.exec(type);
    const parts = (generated ? generated[1] : type).split('|').map((p) => p.trim());
    let allowsNull = false;
    for (const part of parts) {
      if (part === 'null') allowsNull = true;
      else if (part === 'string' || part === 'number' || /^'[^']*'$/.test(part)) continue;
      else if (aliases.has(part)) {
        if (/\bnull\b/.test(aliases.get(part) ?? '')) throw new Error(`tables.ts: alias ${part} allows null`);
      } else throw new Error(`tables.ts: cannot read the type "${type}" of ${where}`);
    }
    return allowsNull;
  };

  const database = interfaces.get('Database');
  if (!database) throw new Error('tables.ts: no interface Database');
  const schema: Schema = new Map();
  for (const [table, type] of database) {
    const members = interfaces.get(type);
    if (!members) throw new Error(`tables.ts: Database.${table} is ${type}, not an interface of the file`);
    const columns = [...members].map(([name, t]) => ({ name, nullable: nullable(`${type}.${name}`, t) }));
    schema.set(table, columns.sort(byName));
  }
  const used = new Set(database.values());
  const unused = [...interfaces.keys()].filter((name) => name !== 'Database' && !used.has(name));
  if (unused.length > 0) throw new Error(`tables.ts: interfaces that are no table of Database: ${unused.join(', ')}`);
  return schema;
}

/**
 * The tables of the database and their columns, without Kysely's. SQLite lets a PRIMARY KEY
 * that is not an INTEGER hold NULL unless it says NOT NULL (a compatibility quirk of SQLite's);
 * the application always writes its ids, so a primary key column counts as not null here.
 */
async function sqliteSchema({ db }: TestDatabase): Promise<Schema> {
  const tables = await sql<{ name: string }>`
    select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db);
  const schema: Schema = new Map();
  for (const { name } of tables.rows) {
    if (KYSELY_TABLES.includes(name)) continue;
    const columns = await sql<{ name: string; notnull: number; pk: number }>`
      select name, "notnull", pk from pragma_table_info(${name})`.execute(db);
    schema.set(name, columns.rows.map((c) => ({ name: c.name, nullable: c.notnull === 0 && c.pk === 0 })).sort(byName));
  }
  return schema;
}

/** The tables of the current schema and their columns, without Kysely's and without partitions. */
async function postgresSchema({ db }: TestDatabase): Promise<Schema> {
  const tables = await sql<{ name: string }>`
    select relname as name from pg_class
    where relnamespace = current_schema()::regnamespace and relkind in ('r', 'p') and not relispartition`.execute(db);
  const columns = await sql<{ table_name: string; column_name: string; is_nullable: 'YES' | 'NO' }>`
    select table_name, column_name, is_nullable from information_schema.columns
    where table_schema = current_schema()`.execute(db);
  const schema: Schema = new Map();
  for (const { name } of tables.rows) {
    if (KYSELY_TABLES.includes(name)) continue;
    const own = columns.rows.filter((c) => c.table_name === name);
    schema.set(name, own.map((c) => ({ name: c.column_name, nullable: c.is_nullable === 'YES' })).sort(byName));
  }
  return schema;
}

/** What differs between the declared schema and the database's, one line each. */
function differences(declared: Schema, actual: Schema): string[] {
  const found: string[] = [];
  for (const table of declared.keys()) if (!actual.has(table)) found.push(`${table}: declared, not in the database`);
  for (const table of actual.keys()) if (!declared.has(table)) found.push(`${table}: in the database, not declared`);
  for (const [table, columns] of declared) {
    const inDb = actual.get(table);
    if (!inDb) continue;
    for (const c of columns) {
      const d = inDb.find((x) => x.name === c.name);
      if (!d) found.push(`${table}.${c.name}: declared, not in the database`);
      else if (d.nullable !== c.nullable)
        found.push(
          `${table}.${c.name}: ${d.nullable ? 'nullable' : 'not null'} in the database, declared ${c.nullable ? 'nullable' : 'not null'}`,
        );
    }
    for (const d of inDb)
      if (!columns.some((c) => c.name === d.name)) found.push(`${table}.${d.name}: in the database, not declared`);
  }
  return found;
}

test('the tables.ts reader reads its forms and refuses anything else', () => {
  const file = (member: string) =>
    `export type Kind = 'a' | 'b';\nexport interface XTable {\n  /** doc */\n  id: string;\n  ${member}\n}\nexport interface Database {\n  xs: XTable;\n}\n`;
  assert.deepEqual(declaredSchema(file('kind: Kind; // note')).get('xs'), [
    { name: 'id', nullable: false },
    { name: 'kind', nullable: false },
  ]);
  assert.deepEqual(declaredSchema(file('n?: Generated<number | null>;')).get('xs')?.[1], { name: 'n', nullable: true });
  for (const member of ['meta: { a: string };', 'tags: string[];', 'at: Date;', 'a: string; b: string;', 'x: string'])
    assert.throws(() => declaredSchema(file(member)), /tables\.ts: /, member);
  assert.throws(() => declaredSchema(file('id: number;')), /declared twice/);
  assert.throws(
    () => declaredSchema(`${file('n: number;')}export interface LostTable {\n  id: string;\n}\n`),
    /no table of Database: LostTable/,
  );
});

test('every file of src/db/migrations/ is a migration listed under its own name, in order', () => {
  const files = readdirSync(join(DB_DIR, 'migrations')).filter((f) => !MIGRATION_HELPERS.includes(f));
  const names = files.map((f) => {
    const m = /^(\d{4})-([a-z0-9]+(?:-[a-z0-9]+)*)\.ts$/.exec(f);
    assert.ok(m, `${f} is named NNNN-words.ts`);
    return `${m[1]}_${m[2].replaceAll('-', '_')}`;
  });
  assert.deepEqual(names.sort(), [...MIGRATION_NAMES]);
});

describe(`the migrated schema (${ON_POSTGRES ? 'PostgreSQL' : 'SQLite'})`, () => {
  let database: TestDatabase;
  let actual: Schema;
  const declared = declaredSchema(readFileSync(join(DB_DIR, 'tables.ts'), 'utf8'));
  before(async () => {
    database = await openTestDatabase('schema');
    actual = await (ON_POSTGRES ? postgresSchema(database) : sqliteSchema(database));
  });
  after(() => database?.close());

  it('has every table tables.ts declares, with exactly its columns, null where it allows null, and nothing else', () => {
    assert.ok(declared.size >= 20, `tables.ts declares ${declared.size} tables`);
    assert.deepEqual(differences(declared, actual), []);
  });

  it('partitions only the delivery log on PostgreSQL, each of its two tables with a default partition', {
    skip: !ON_POSTGRES,
  }, async () => {
    const partitioned = await sql<{ name: string }>`
      select relname as name from pg_class
      where relnamespace = current_schema()::regnamespace and relkind = 'p' order by relname`.execute(database.db);
    assert.deepEqual(
      partitioned.rows.map((r) => r.name),
      [...PARTITIONED].sort(),
    );
    const children = await sql<{ name: string; parent: string }>`
      select c.relname as name, p.relname as parent from pg_class c
        join pg_inherits i on i.inhrelid = c.oid join pg_class p on p.oid = i.inhparent
      where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'p') and c.relispartition
      order by c.relname`.execute(database.db);
    assert.deepEqual(
      children.rows.filter((c) => !PARTITIONED.includes(c.parent)),
      [],
      'every partition is one of a partitioned table of the delivery log',
    );
    for (const table of PARTITIONED)
      assert.ok(
        children.rows.some((c) => c.name === `${table}_default` && c.parent === table),
        `${table}_default`,
      );
  });
});
