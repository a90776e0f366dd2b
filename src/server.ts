/**
 * Entry point: load config → open and migrate the database → build the app → listen. On
 * SIGTERM/SIGINT it stops accepting connections, lets requests in flight finish, closes the
 * database (checkpointing the WAL) and exits 0.
 */
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.js';
import { ConfigError, authRequired, isLoopbackHost, loadConfig, type Config } from './config.js';
import { createDatabase } from './db/create-database.js';
import { migrateToLatest } from './db/migrator.js';

function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`Invalid configuration: ${error.message}`);
    process.exit(1);
  }
}

const config = loadConfigOrExit();
const database = createDatabase(config.databaseUrl);
await migrateToLatest(database.db);
const app = await buildApp({ config, database });

if (!authRequired(config) && !isLoopbackHost(config.host)) {
  app.log.warn(
    { host: config.host },
    'AUTH_MODE=anonymous on a non-loopback address: every client shares one anonymous owner',
  );
}
app.log.info(
  { authMode: config.authMode, host: config.host },
  authRequired(config)
    ? 'API requests need a token (npm run tokens -- create …)'
    : 'API requests without a token act as the anonymous owner',
);

closeWithGrace({ delay: config.shutdownTimeoutMs }, async ({ signal, err }) => {
  if (err) app.log.error({ err }, 'shutting down after an unexpected error');
  else app.log.info({ signal }, 'shutting down');
  await app.close();
  await database.close();
});

try {
  await app.listen({ port: config.port, host: config.host });
} catch (error) {
  app.log.fatal({ err: error }, 'could not start listening');
  await database.close();
  process.exit(1);
}
