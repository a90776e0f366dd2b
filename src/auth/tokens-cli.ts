/**
 * `npm run tokens -- <command>`: manages API keys in the configured database.
 *
 *   create --owner <id> --scopes <s1,s2> [--expires 30d|12h|90m|<ISO date>] [--name <text>] [--json]
 *   list [--owner <id>] [--json]
 *   revoke <id>
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.js';
import { createDatabase } from '../db/create-database.js';
import type { Database } from '../db/database.js';
import { migrateToLatest } from '../db/migrator.js';
import { createApiKey, parseExpiry, statusOf } from './api-keys.js';
import { apiKeysRepository, type ApiKeyRow } from './api-keys.repository.js';
import { SCOPES, isScope } from './scopes.js';

const USAGE = `Usage: npm run tokens -- <command>
  create --owner <id> --scopes <${SCOPES.join(',')}> [--expires 30d|12h|90m|<ISO date>] [--name <text>] [--json]
  list [--owner <id>] [--json]
  revoke <id>`;

/** A mistake in the command line: printed with the usage, exit code 2. */
class UsageError extends Error {}

function parseScopes(raw: string | undefined) {
  if (raw === undefined) throw new UsageError('create needs --scopes');
  const scopes = raw.split(',').map((scope) => scope.trim());
  const unknown = scopes.filter((scope) => !isScope(scope));
  if (unknown.length > 0) {
    throw new UsageError(`unknown scope ${unknown.join(', ')}; scopes are ${SCOPES.join(', ')}`);
  }
  return scopes.filter(isScope);
}

function publicView(row: ApiKeyRow) {
  return {
    id: row.id,
    owner: row.owner_id,
    name: row.name,
    scopes: row.scopes.split(' '),
    status: statusOf(row),
    created_at: row.created_at,
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
    last_used_at: row.last_used_at,
  };
}

async function create(database: Database, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      owner: { type: 'string' },
      scopes: { type: 'string' },
      expires: { type: 'string' },
      name: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  if (values.owner === undefined) throw new UsageError('create needs --owner');
  const scopes = parseScopes(values.scopes);
  let expiresAt: Date | undefined;
  try {
    expiresAt = values.expires === undefined ? undefined : parseExpiry(values.expires);
    const { row, token } = await createApiKey(database, {
      ownerId: values.owner,
      scopes,
      expiresAt,
      name: values.name,
    });
    if (values.json) {
      console.log(JSON.stringify({ ...publicView(row), token }));
      return;
    }
    console.log(`Created API key ${row.id} for owner ${row.owner_id} (scopes: ${row.scopes}).`);
    console.log('Token (shown only now; store it safely):');
    console.log(token);
  } catch (error) {
    if (error instanceof RangeError) throw new UsageError(error.message);
    throw error;
  }
}

async function list(database: Database, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { owner: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  const rows = (await apiKeysRepository.list(database.db, values.owner)).map(publicView);
  if (values.json) {
    console.log(JSON.stringify(rows));
    return;
  }
  if (rows.length === 0) {
    console.log('No API keys.');
    return;
  }
  const table = [
    ['ID', 'OWNER', 'NAME', 'SCOPES', 'STATUS', 'EXPIRES', 'LAST USED'],
    ...rows.map((row) => [
      row.id,
      row.owner,
      row.name ?? '-',
      row.scopes.join(','),
      row.status,
      row.expires_at ?? 'never',
      row.last_used_at ?? 'never',
    ]),
  ];
  const widths =
    table[0]?.map((_, column) => Math.max(...table.map((line) => line[column]?.length ?? 0))) ?? [];
  for (const line of table) {
    console.log(
      line
        .map((cell, column) => cell.padEnd(widths[column] ?? 0))
        .join('  ')
        .trimEnd(),
    );
  }
}

async function revoke(database: Database, args: string[]): Promise<void> {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
  const [id, ...rest] = positionals;
  if (id === undefined || rest.length > 0) throw new UsageError('revoke needs exactly one key id');
  const revoked = await database.writeTransaction((trx) =>
    apiKeysRepository.revoke(trx, id, new Date().toISOString()),
  );
  if (!revoked) {
    console.error(`No API key with id ${id}.`);
    process.exitCode = 1;
    return;
  }
  console.log(`Revoked API key ${id}; it stops working on its next request.`);
}

const COMMANDS = { create, list, revoke } as const;

async function main(argv: string[]): Promise<void> {
  const [name, ...args] = argv;
  const command = name !== undefined && Object.hasOwn(COMMANDS, name) ? name : undefined;
  if (command === undefined) throw new UsageError(name ? `unknown command ${name}` : '');
  const config = loadConfig();
  const database = createDatabase(config.databaseUrl);
  try {
    await migrateToLatest(database.db);
    await COMMANDS[command as keyof typeof COMMANDS](database, args);
  } finally {
    await database.close();
  }
}

try {
  await main(process.argv.slice(2));
} catch (error) {
  if (error instanceof UsageError || (error instanceof TypeError && 'code' in error)) {
    // TypeError with a code: parseArgs refusing an unknown or malformed option.
    if (error.message) console.error(error.message);
    console.error(USAGE);
    process.exitCode = 2;
  } else if (error instanceof ConfigError) {
    console.error(`Invalid configuration: ${error.message}`);
    process.exitCode = 1;
  } else {
    throw error;
  }
}
