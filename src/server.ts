/**
 * Entry point: load config → open and migrate the database → build the app → listen. On
 * SIGTERM/SIGINT it stops accepting connections, lets requests in flight finish, closes the
 * database (checkpointing the WAL) and exits 0.
 */
import { setTimeout } from 'node:timers/promises';
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
// The app's logger exists only once the app does; pool errors before that are only possible
// while migrating, which fails loudly on its own.
let logPoolError = (_error: Error): void => undefined;
const database = createDatabase(config.databaseUrl, {
  onPoolError: (error) => {
    logPoolError(error);
  },
});
await migrateToLatest(database.db);
const app = await buildApp({ config, database });
logPoolError = (error) => {
  app.log.warn({ err: error }, 'an idle database connection failed; the pool replaces it');
};

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

/**
 * How long a shutdown keeps listening while answering 503: clients and load balancers learn to go
 * elsewhere from an answer, instead of from connections reset when the listener closes.
 */
const DRAIN_MS = Math.min(1000, Math.floor(config.shutdownTimeoutMs / 4));

closeWithGrace({ delay: config.shutdownTimeoutMs }, async ({ signal, err }) => {
  if (err) app.log.error({ err }, 'shutting down after an unexpected error');
  else app.log.info({ signal }, 'shutting down');
  app.stopAcceptingRequests();
  await setTimeout(DRAIN_MS);
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
