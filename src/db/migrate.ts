/** `npm run migrate`: applies pending migrations to the configured database and exits. */
import { ConfigError, loadConfig } from '../config.js';
import { createDatabase } from './create-database.js';
import { migrateToLatest } from './migrator.js';

try {
  const config = loadConfig();
  const database = createDatabase(config.databaseUrl);
  try {
    const results = await migrateToLatest(database.db);
    if (results.length === 0) console.log('Database is up to date.');
    for (const result of results) console.log(`${result.status}: ${result.migrationName}`);
  } finally {
    await database.close();
  }
} catch (error) {
  console.error(error instanceof ConfigError ? `Invalid configuration: ${error.message}` : error);
  process.exitCode = 1;
}
