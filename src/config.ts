import { isIP } from 'node:net';

/**
 * Every setting the service reads from the environment, each with its default and the one line
 * of documentation that `.env.example` and the README repeat. `loadConfig` is the only reader of
 * `process.env`; the rest of the code receives a frozen `Config`.
 */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string;
  /** Absolute origin used in `url` fields and `Link` headers; derived from the request when unset. */
  readonly publicBaseUrl: string | undefined;
  readonly logLevel: LogLevel;
  /** `'*'` or an explicit list of allowed origins. */
  readonly corsOrigins: '*' | readonly string[];
  readonly bodyLimit: number;
  readonly maxUrlLength: number;
  readonly maxHeaderSize: number;
  readonly authMode: AuthMode;
  readonly requestTimeoutMs: number;
  readonly headersTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly shutdownTimeoutMs: number;
  readonly idempotencyTtlHours: number;
  /** Secret that signs list cursors; when unset, one is generated and kept in the database. */
  readonly cursorSecret: string | undefined;
  /** OIDC access tokens: accepted only when a JWKS URL is configured. */
  readonly jwt: JwtConfig | undefined;
  /** Requests per owner (per client IP when anonymous) per window; 0 turns rate limiting off. */
  readonly rateLimitMax: number;
  readonly rateLimitWindowSeconds: number;
  /** Shared store for rate limits across instances; in-memory per instance when unset. */
  readonly redisUrl: string | undefined;
  /** Most todos one owner may keep. */
  readonly todoQuota: number;
  readonly deletedRetentionDays: number;
  readonly eventRetentionHours: number;
  readonly sseMaxStreams: number;
  readonly sseHeartbeatMs: number;
  readonly sseDrainTimeoutMs: number;
  readonly webhooks: WebhookConfig;
  /** Reverse proxies whose X-Forwarded-* headers are believed (addresses or CIDR ranges). */
  readonly trustProxy: readonly string[] | undefined;
}

export interface JwtConfig {
  readonly jwksUrl: string;
  readonly issuer: string;
  readonly audience: string;
  readonly algorithms: readonly string[];
  readonly clockToleranceSeconds: number;
}

/** Webhook delivery: the SSRF policy and the worker's limits. */
export interface WebhookConfig {
  readonly allowLoopback: boolean;
  readonly allowHttp: boolean;
  readonly ports: readonly number[];
  readonly timeoutMs: number;
  readonly concurrency: number;
  readonly endpointConcurrency: number;
  readonly retryScale: number;
  readonly pollMs: number;
}

export type LogLevel = (typeof LOG_LEVELS)[number];
export type AuthMode = (typeof AUTH_MODES)[number];

const AUTH_MODES = ['auto', 'required', 'anonymous'] as const;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** A configuration value the service cannot run with; the message names the variable. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

/** One documented variable: its default and how to read it. */
interface Setting<T> {
  readonly doc: string;
  readonly default: string | undefined;
  readonly parse: (raw: string, name: string) => T;
}

function integer(min: number, max: number): Setting<number>['parse'] {
  return (raw, name) => {
    if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be an integer (got "${raw}")`);
    const value = Number(raw);
    if (value < min || value > max) {
      throw new ConfigError(name, `must be between ${min} and ${max} (got ${raw})`);
    }
    return value;
  };
}

function boolean(raw: string, name: string): boolean {
  if (raw !== 'true' && raw !== 'false') {
    throw new ConfigError(name, `must be true or false (got "${raw}")`);
  }
  return raw === 'true';
}

function fraction(raw: string, name: string): number {
  const value = /^(0|[1-9]\d*)?(\.\d+)?$/.test(raw) && raw !== '' ? Number(raw) : Number.NaN;
  if (!(value > 0 && value <= 1)) {
    throw new ConfigError(name, `must be a number above 0 and at most 1 (got "${raw}")`);
  }
  return value;
}

function ports(raw: string, name: string): readonly number[] {
  const list = raw.split(',').map((entry) => entry.trim());
  if (
    list.some((entry) => !/^\d{1,5}$/.test(entry) || Number(entry) < 1 || Number(entry) > 65_535)
  ) {
    throw new ConfigError(name, `must be a comma-separated list of ports (got "${raw}")`);
  }
  return list.map(Number);
}

function absoluteHttpUrl(raw: string, name: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be an absolute http(s) URL (got "${raw}")`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(name, `must use http or https (got "${url.protocol}")`);
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new ConfigError(name, 'must not carry credentials, a query or a fragment');
  }
  return raw.replace(/\/+$/, '');
}

function corsOrigins(raw: string, name: string): Config['corsOrigins'] {
  if (raw.trim() === '*') return '*';
  const origins = raw
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin.length > 0);
  if (origins.length === 0) throw new ConfigError(name, 'must be "*" or a comma-separated list');
  for (const origin of origins) {
    const url = URL.canParse(origin) ? new URL(origin) : undefined;
    if (!url || url.origin !== origin) {
      throw new ConfigError(
        name,
        `has "${origin}", which is not an origin like https://app.example`,
      );
    }
  }
  return origins;
}

function databaseUrl(raw: string, name: string): string {
  const sqlite = raw.startsWith('sqlite:') && raw.length > 'sqlite:'.length;
  const postgres = /^postgres(ql)?:\/\/./.test(raw) && URL.canParse(raw);
  if (!sqlite && !postgres) {
    throw new ConfigError(name, `must be sqlite:<path> or postgres://… (got "${raw}")`);
  }
  return raw;
}

function oneOf<T extends string>(values: readonly T[]): Setting<T>['parse'] {
  return (raw, name) => {
    if (!(values as readonly string[]).includes(raw)) {
      throw new ConfigError(name, `must be one of ${values.join(', ')} (got "${raw}")`);
    }
    return raw as T;
  };
}

function host(raw: string, name: string): string {
  const hostname = /^[A-Za-z0-9.-]+$/.test(raw) || isIP(raw) !== 0;
  if (!hostname) throw new ConfigError(name, `must be an IP address or host name (got "${raw}")`);
  return raw;
}

function redisUrl(raw: string, name: string): string {
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (!url || (url.protocol !== 'redis:' && url.protocol !== 'rediss:')) {
    throw new ConfigError(name, `must be a redis:// or rediss:// URL (got "${raw}")`);
  }
  return raw;
}

/** Signature algorithms jose verifies that are asymmetric: a JWKS never holds shared secrets. */
const ASYMMETRIC_JWT_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;

function jwtAlgorithms(raw: string, name: string): readonly string[] {
  const algorithms = raw
    .split(',')
    .map((algorithm) => algorithm.trim())
    .filter((algorithm) => algorithm.length > 0);
  const unknown = algorithms.filter(
    (a) => !(ASYMMETRIC_JWT_ALGORITHMS as readonly string[]).includes(a),
  );
  if (algorithms.length === 0 || unknown.length > 0) {
    throw new ConfigError(
      name,
      `must list algorithms among ${ASYMMETRIC_JWT_ALGORITHMS.join(', ')} (got "${raw}")`,
    );
  }
  return algorithms;
}

function proxyAddresses(raw: string, name: string): readonly string[] {
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address ?? '');
    const maxBits = family === 4 ? 32 : 128;
    const validBits = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= maxBits);
    if (family === 0 || !validBits || extra !== undefined) {
      throw new ConfigError(name, `has "${entry}", which is not an IP address or CIDR range`);
    }
  }
  if (entries.length === 0) throw new ConfigError(name, 'must list at least one address');
  return entries;
}

function text(raw: string): string {
  return raw;
}

function secret(raw: string, name: string): string {
  if (raw.length < 32) throw new ConfigError(name, 'must be at least 32 characters long');
  return raw;
}

/** The documented environment: the single source for loading, `.env.example` and the README. */
export const SETTINGS = {
  PORT: { doc: 'TCP port to listen on.', default: '3000', parse: integer(0, 65535) },
  HOST: {
    doc: 'Address to bind. On a non-loopback address AUTH_MODE=auto requires a token on every API request.',
    default: '127.0.0.1',
    parse: host,
  },
  DATABASE_URL: {
    doc: 'Storage: sqlite:<path> (file created on first start) or postgres://user@host:5432/db.',
    default: 'sqlite:./data/todos.db',
    parse: databaseUrl,
  },
  PUBLIC_BASE_URL: {
    doc: 'Absolute origin clients reach the service at, used in `url` fields and Link headers. Unset: derived from each request.',
    default: undefined,
    parse: absoluteHttpUrl,
  },
  LOG_LEVEL: {
    doc: 'pino log level: fatal, error, warn, info, debug, trace or silent.',
    default: 'info',
    parse: oneOf(LOG_LEVELS),
  },
  CORS_ORIGINS: {
    doc: 'Allowed browser origins: "*" (no credentials) or a comma-separated list of origins.',
    default: '*',
    parse: corsOrigins,
  },
  BODY_LIMIT: {
    doc: 'Largest request body in bytes; larger bodies get 413.',
    default: '65536',
    parse: integer(1024, 10 * 1024 * 1024),
  },
  MAX_URL_LENGTH: {
    doc: 'Longest request target (path and query) in bytes; longer ones get 414.',
    default: '8192',
    parse: integer(256, 65536),
  },
  MAX_HEADER_SIZE: {
    doc: 'Largest request head (request line and headers) in bytes; larger ones get 431.',
    default: '16384',
    parse: integer(4096, 65536),
  },
  AUTH_MODE: {
    doc: 'auto: anonymous while bound to loopback, tokens required elsewhere. required: tokens always. anonymous: one implicit owner on any address.',
    default: 'auto',
    parse: oneOf(AUTH_MODES),
  },
  REQUEST_TIMEOUT_MS: {
    doc: 'Time a client has to send a whole request; slower clients get 408.',
    default: '30000',
    parse: integer(1000, 600_000),
  },
  HEADERS_TIMEOUT_MS: {
    doc: 'Time a client has to send the request head; slower clients get 408.',
    default: '10000',
    parse: integer(1000, 600_000),
  },
  KEEP_ALIVE_TIMEOUT_MS: {
    doc: 'How long an idle keep-alive connection stays open.',
    default: '5000',
    parse: integer(100, 600_000),
  },
  SHUTDOWN_TIMEOUT_MS: {
    doc: 'On SIGTERM/SIGINT, how long in-flight requests may take before the process exits anyway.',
    default: '9000',
    parse: integer(100, 120_000),
  },
  IDEMPOTENCY_TTL_HOURS: {
    doc: 'How long an Idempotency-Key and its stored response are kept.',
    default: '24',
    parse: integer(1, 24 * 30),
  },
  CURSOR_SECRET: {
    doc: 'Secret (≥ 32 chars) that signs list cursors. Unset: generated once and kept in the database.',
    default: undefined,
    parse: secret,
  },
  JWT_JWKS_URL: {
    doc: 'JWKS URL of an OIDC issuer; when set, its JWT access tokens are accepted (owner = sub). Needs JWT_ISSUER and JWT_AUDIENCE.',
    default: undefined,
    parse: absoluteHttpUrl,
  },
  JWT_ISSUER: { doc: 'Required `iss` of JWT access tokens.', default: undefined, parse: text },
  JWT_AUDIENCE: { doc: 'Required `aud` of JWT access tokens.', default: undefined, parse: text },
  JWT_ALGORITHMS: {
    doc: 'Comma-separated JWT signature algorithms accepted (asymmetric only).',
    default: 'RS256,ES256,EdDSA',
    parse: jwtAlgorithms,
  },
  JWT_CLOCK_TOLERANCE_S: {
    doc: 'Seconds of clock skew tolerated on exp and nbf.',
    default: '30',
    parse: integer(0, 300),
  },
  RATE_LIMIT_MAX: {
    doc: 'Requests allowed per window per owner (per client IP when anonymous); 0 disables rate limiting.',
    default: '1000',
    parse: integer(0, 10_000_000),
  },
  RATE_LIMIT_WINDOW_S: {
    doc: 'Length of the rate-limit window in seconds.',
    default: '60',
    parse: integer(1, 86_400),
  },
  REDIS_URL: {
    doc: 'redis:// URL of a Redis shared by every instance for rate limits. Unset: limits are per instance, in memory.',
    default: undefined,
    parse: redisUrl,
  },
  TRUST_PROXY: {
    doc: 'Comma-separated addresses or CIDR ranges of reverse proxies whose X-Forwarded-For/-Proto/-Host are believed. Unset: none are.',
    default: undefined,
    parse: proxyAddresses,
  },
  TODO_QUOTA: {
    doc: 'Most todos one owner may keep; creating more answers 422 quota-exceeded.',
    default: '100000',
    parse: integer(1, 100_000_000),
  },
  DELETED_RETENTION_DAYS: {
    doc: 'How long a deleted todo can still be restored before it is purged for good.',
    default: '30',
    parse: integer(1, 3650),
  },
  SSE_MAX_STREAMS: {
    doc: 'Most event streams (GET /api/todos/events) one owner may hold open per instance.',
    default: '5',
    parse: integer(1, 1000),
  },
  SSE_HEARTBEAT_MS: {
    doc: 'Interval of the comment lines that keep an idle event stream open through proxies.',
    default: '15000',
    parse: integer(100, 300_000),
  },
  SSE_DRAIN_TIMEOUT_MS: {
    doc: 'How long an event stream client may leave sent events unread before it is disconnected.',
    default: '30000',
    parse: integer(100, 600_000),
  },
  WEBHOOK_ALLOW_LOOPBACK: {
    doc: 'Let webhooks reach 127.0.0.0/8 and ::1 (tests and local development only; refused with NODE_ENV=production).',
    default: 'false',
    parse: boolean,
  },
  WEBHOOK_ALLOW_HTTP: {
    doc: 'Accept http:// webhook URLs besides https:// (tests and local development only).',
    default: 'false',
    parse: boolean,
  },
  WEBHOOK_PORTS: {
    doc: 'Comma-separated ports webhook receivers may listen on.',
    default: '80,443',
    parse: ports,
  },
  WEBHOOK_TIMEOUT_MS: {
    doc: 'How long one webhook attempt may take in all (connect, send, answer).',
    default: '15000',
    parse: integer(100, 60_000),
  },
  WEBHOOK_CONCURRENCY: {
    doc: 'Webhook attempts in flight at once per instance.',
    default: '32',
    parse: integer(1, 1000),
  },
  WEBHOOK_ENDPOINT_CONCURRENCY: {
    doc: 'Webhook attempts in flight at once to one endpoint, per instance.',
    default: '4',
    parse: integer(1, 100),
  },
  WEBHOOK_RETRY_SCALE: {
    doc: 'Multiplies the webhook retry schedule (1 = the documented 24 h; tests shrink it).',
    default: '1',
    parse: fraction,
  },
  WEBHOOK_POLL_MS: {
    doc: 'How often each instance looks for due webhook deliveries.',
    default: '1000',
    parse: integer(50, 60_000),
  },
  EVENT_RETENTION_HOURS: {
    doc: 'How long events are kept for the event stream (Last-Event-ID) and delta sync (since).',
    default: '24',
    parse: integer(1, 24 * 90),
  },
} as const satisfies Record<string, Setting<unknown>>;

type Settings = typeof SETTINGS;
type Parsed<K extends keyof Settings> = ReturnType<Settings[K]['parse']>;

function read<K extends keyof Settings>(env: Env, name: K): Parsed<K> | undefined {
  const raw = env[name];
  const setting: Setting<Parsed<K>> = SETTINGS[name] as Setting<Parsed<K>>;
  const value = raw === undefined || raw === '' ? setting.default : raw;
  return value === undefined ? undefined : setting.parse(value, name);
}

function required<K extends keyof Settings>(env: Env, name: K): Parsed<K> {
  const value = read(env, name);
  if (value === undefined) throw new ConfigError(name, 'is required');
  return value;
}

/** True for addresses only this machine can reach. */
export function isLoopbackHost(hostname: string): boolean {
  return (
    hostname === 'localhost' ||
    hostname === '::1' ||
    (isIP(hostname) === 4 && hostname.startsWith('127.'))
  );
}

/** Reads and validates the environment once; throws `ConfigError` naming the first bad variable. */
export function loadConfig(env: Env = process.env): Config {
  const config: Config = {
    port: required(env, 'PORT'),
    host: required(env, 'HOST'),
    databaseUrl: required(env, 'DATABASE_URL'),
    publicBaseUrl: read(env, 'PUBLIC_BASE_URL'),
    logLevel: required(env, 'LOG_LEVEL'),
    corsOrigins: required(env, 'CORS_ORIGINS'),
    bodyLimit: required(env, 'BODY_LIMIT'),
    maxUrlLength: required(env, 'MAX_URL_LENGTH'),
    maxHeaderSize: required(env, 'MAX_HEADER_SIZE'),
    authMode: required(env, 'AUTH_MODE'),
    requestTimeoutMs: required(env, 'REQUEST_TIMEOUT_MS'),
    headersTimeoutMs: required(env, 'HEADERS_TIMEOUT_MS'),
    keepAliveTimeoutMs: required(env, 'KEEP_ALIVE_TIMEOUT_MS'),
    shutdownTimeoutMs: required(env, 'SHUTDOWN_TIMEOUT_MS'),
    idempotencyTtlHours: required(env, 'IDEMPOTENCY_TTL_HOURS'),
    cursorSecret: read(env, 'CURSOR_SECRET'),
    jwt: jwtConfig(env),
    rateLimitMax: required(env, 'RATE_LIMIT_MAX'),
    rateLimitWindowSeconds: required(env, 'RATE_LIMIT_WINDOW_S'),
    redisUrl: read(env, 'REDIS_URL'),
    todoQuota: required(env, 'TODO_QUOTA'),
    deletedRetentionDays: required(env, 'DELETED_RETENTION_DAYS'),
    eventRetentionHours: required(env, 'EVENT_RETENTION_HOURS'),
    sseMaxStreams: required(env, 'SSE_MAX_STREAMS'),
    sseHeartbeatMs: required(env, 'SSE_HEARTBEAT_MS'),
    sseDrainTimeoutMs: required(env, 'SSE_DRAIN_TIMEOUT_MS'),
    webhooks: {
      allowLoopback: required(env, 'WEBHOOK_ALLOW_LOOPBACK'),
      allowHttp: required(env, 'WEBHOOK_ALLOW_HTTP'),
      ports: required(env, 'WEBHOOK_PORTS'),
      timeoutMs: required(env, 'WEBHOOK_TIMEOUT_MS'),
      concurrency: required(env, 'WEBHOOK_CONCURRENCY'),
      endpointConcurrency: required(env, 'WEBHOOK_ENDPOINT_CONCURRENCY'),
      retryScale: required(env, 'WEBHOOK_RETRY_SCALE'),
      pollMs: required(env, 'WEBHOOK_POLL_MS'),
    },
    trustProxy: read(env, 'TRUST_PROXY'),
  };
  if (config.webhooks.allowLoopback && env.NODE_ENV === 'production') {
    throw new ConfigError('WEBHOOK_ALLOW_LOOPBACK', 'must not be true with NODE_ENV=production');
  }
  if (config.headersTimeoutMs > config.requestTimeoutMs) {
    throw new ConfigError('HEADERS_TIMEOUT_MS', 'must not exceed REQUEST_TIMEOUT_MS');
  }
  return Object.freeze(config);
}

/** JWT settings come as a set: a JWKS URL without issuer and audience would accept too much. */
function jwtConfig(env: Env): JwtConfig | undefined {
  const jwksUrl = read(env, 'JWT_JWKS_URL');
  if (jwksUrl === undefined) {
    for (const name of ['JWT_ISSUER', 'JWT_AUDIENCE'] as const) {
      if (read(env, name) !== undefined) throw new ConfigError(name, 'needs JWT_JWKS_URL');
    }
    return undefined;
  }
  return {
    jwksUrl,
    issuer: required(env, 'JWT_ISSUER'),
    audience: required(env, 'JWT_AUDIENCE'),
    algorithms: required(env, 'JWT_ALGORITHMS'),
    clockToleranceSeconds: required(env, 'JWT_CLOCK_TOLERANCE_S'),
  };
}

/** Whether API requests must carry a token: always, never, or (auto) off loopback only. */
export function authRequired(config: Pick<Config, 'authMode' | 'host'>): boolean {
  if (config.authMode === 'auto') return !isLoopbackHost(config.host);
  return config.authMode === 'required';
}
