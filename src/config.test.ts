import { describe, expect, it } from 'vitest';
import { ConfigError, SETTINGS, authRequired, isLoopbackHost, loadConfig } from './config.js';

type Env = Record<string, string | undefined>;

/** Calls `loadConfig(env)` and returns the ConfigError it throws (failing when it does not). */
function configErrorOf(env: Env): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('returns the documented defaults for an empty environment', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: 'sqlite:./data/todos.db',
      publicBaseUrl: undefined,
      logLevel: 'info',
      corsOrigins: '*',
      bodyLimit: 65536,
      maxUrlLength: 8192,
      maxHeaderSize: 16384,
      authMode: 'auto',
      requestTimeoutMs: 30000,
      headersTimeoutMs: 10000,
      keepAliveTimeoutMs: 5000,
      shutdownTimeoutMs: 9000,
      idempotencyTtlHours: 24,
      cursorSecret: undefined,
      jwt: undefined,
      rateLimitMax: 1000,
      rateLimitWindowSeconds: 60,
      redisUrl: undefined,
      todoQuota: 100000,
      trustProxy: undefined,
      deletedRetentionDays: 30,
      eventRetentionHours: 24,
      sseMaxStreams: 5,
      sseHeartbeatMs: 15_000,
      sseDrainTimeoutMs: 30_000,
      webhooks: {
        allowLoopback: false,
        allowHttp: false,
        ports: [80, 443],
        timeoutMs: 15_000,
        concurrency: 32,
        endpointConcurrency: 4,
        retryScale: 1,
        pollMs: 1000,
      },
    });
  });

  it('refuses webhook loopback in production, and bad webhook settings', () => {
    expect(() => loadConfig({ WEBHOOK_ALLOW_LOOPBACK: 'true', NODE_ENV: 'production' })).toThrow(
      /WEBHOOK_ALLOW_LOOPBACK/,
    );
    expect(loadConfig({ WEBHOOK_ALLOW_LOOPBACK: 'true' }).webhooks.allowLoopback).toBe(true);
    expect(() => loadConfig({ WEBHOOK_ALLOW_HTTP: 'yes' })).toThrow(/WEBHOOK_ALLOW_HTTP/);
    expect(() => loadConfig({ WEBHOOK_PORTS: '443,99999' })).toThrow(/WEBHOOK_PORTS/);
    expect(() => loadConfig({ WEBHOOK_RETRY_SCALE: '0' })).toThrow(/WEBHOOK_RETRY_SCALE/);
    expect(() => loadConfig({ WEBHOOK_RETRY_SCALE: '1.5' })).toThrow(/WEBHOOK_RETRY_SCALE/);
    expect(loadConfig({ WEBHOOK_RETRY_SCALE: '0.001' }).webhooks.retryScale).toBe(0.001);
  });

  it('treats empty values as unset', () => {
    expect(loadConfig({ PORT: '', HOST: '', CORS_ORIGINS: '', CURSOR_SECRET: '' })).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      corsOrigins: '*',
      cursorSecret: undefined,
    });
  });

  it('returns a frozen object', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads only the environment it is given', () => {
    expect(loadConfig({ PORT: '8080' }).port).toBe(8080);
    expect(loadConfig({}).port).toBe(3000);
  });

  it('has a line of documentation for every variable', () => {
    for (const [name, setting] of Object.entries(SETTINGS)) {
      expect(setting.doc.length, name).toBeGreaterThan(10);
    }
  });

  it.each<[string, Env, Partial<ReturnType<typeof loadConfig>>]>([
    ['PORT 0 (any free port)', { PORT: '0' }, { port: 0 }],
    ['PORT 65535', { PORT: '65535' }, { port: 65535 }],
    ['HOST localhost', { HOST: 'localhost' }, { host: 'localhost' }],
    ['HOST ::1', { HOST: '::1' }, { host: '::1' }],
    ['HOST 127.0.0.2', { HOST: '127.0.0.2' }, { host: '127.0.0.2' }],
    [
      'HOST 0.0.0.0 with AUTH_MODE=anonymous',
      { HOST: '0.0.0.0', AUTH_MODE: 'anonymous' },
      { host: '0.0.0.0', authMode: 'anonymous' },
    ],
    [
      'HOST :: with AUTH_MODE=anonymous',
      { HOST: '::', AUTH_MODE: 'anonymous' },
      { host: '::', authMode: 'anonymous' },
    ],
    ['DATABASE_URL', { DATABASE_URL: 'sqlite:/tmp/x.db' }, { databaseUrl: 'sqlite:/tmp/x.db' }],
    [
      'DATABASE_URL postgres',
      { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' },
      { databaseUrl: 'postgres://postgres@127.0.0.1:5432/test' },
    ],
    [
      'PUBLIC_BASE_URL without its trailing slash',
      { PUBLIC_BASE_URL: 'https://todo.example/' },
      { publicBaseUrl: 'https://todo.example' },
    ],
    [
      'PUBLIC_BASE_URL with a path prefix',
      { PUBLIC_BASE_URL: 'http://localhost:3000/base' },
      { publicBaseUrl: 'http://localhost:3000/base' },
    ],
    ['LOG_LEVEL silent', { LOG_LEVEL: 'silent' }, { logLevel: 'silent' }],
    ['CORS_ORIGINS *', { CORS_ORIGINS: ' * ' }, { corsOrigins: '*' }],
    [
      'CORS_ORIGINS list',
      { CORS_ORIGINS: 'https://a.example, http://localhost:5173,' },
      { corsOrigins: ['https://a.example', 'http://localhost:5173'] },
    ],
    ['BODY_LIMIT 1024', { BODY_LIMIT: '1024' }, { bodyLimit: 1024 }],
    ['MAX_URL_LENGTH 256', { MAX_URL_LENGTH: '256' }, { maxUrlLength: 256 }],
    ['MAX_HEADER_SIZE 65536', { MAX_HEADER_SIZE: '65536' }, { maxHeaderSize: 65536 }],
    [
      'equal request and headers timeouts',
      { REQUEST_TIMEOUT_MS: '1000', HEADERS_TIMEOUT_MS: '1000' },
      { requestTimeoutMs: 1000, headersTimeoutMs: 1000 },
    ],
    ['KEEP_ALIVE_TIMEOUT_MS', { KEEP_ALIVE_TIMEOUT_MS: '100' }, { keepAliveTimeoutMs: 100 }],
    ['SHUTDOWN_TIMEOUT_MS', { SHUTDOWN_TIMEOUT_MS: '120000' }, { shutdownTimeoutMs: 120000 }],
    ['IDEMPOTENCY_TTL_HOURS', { IDEMPOTENCY_TTL_HOURS: '720' }, { idempotencyTtlHours: 720 }],
    [
      'CURSOR_SECRET of 32 characters',
      { CURSOR_SECRET: 's'.repeat(32) },
      { cursorSecret: 's'.repeat(32) },
    ],
  ])('accepts %s', (_label, env, expected) => {
    expect(loadConfig(env)).toMatchObject(expected);
  });

  it.each<[string, string]>([
    ['PORT', 'abc'],
    ['PORT', '-1'],
    ['PORT', '65536'],
    ['PORT', '80.5'],
    ['PORT', '1e3'],
    ['PORT', '0x50'],
    ['PORT', ' 80'],
    ['HOST', 'bad host'],
    ['HOST', 'host_name'],
    ['HOST', '[::1]'],
    ['DATABASE_URL', 'mysql://localhost/todos'],
    ['DATABASE_URL', 'sqlite:'],
    ['DATABASE_URL', './todos.db'],
    ['PUBLIC_BASE_URL', 'todo.example'],
    ['PUBLIC_BASE_URL', 'ftp://todo.example'],
    ['PUBLIC_BASE_URL', 'https://todo.example/?x=1'],
    ['PUBLIC_BASE_URL', 'https://todo.example/#top'],
    ['PUBLIC_BASE_URL', 'https://user:pass@todo.example'],
    ['LOG_LEVEL', 'verbose'],
    ['LOG_LEVEL', 'INFO'],
    ['CORS_ORIGINS', ','],
    ['CORS_ORIGINS', 'app.example'],
    ['CORS_ORIGINS', 'https://app.example/'],
    ['CORS_ORIGINS', 'https://app.example/path'],
    ['CORS_ORIGINS', 'https://a.example, *'],
    ['BODY_LIMIT', '1023'],
    ['BODY_LIMIT', '10485761'],
    ['BODY_LIMIT', '64k'],
    ['MAX_URL_LENGTH', '255'],
    ['MAX_URL_LENGTH', '65537'],
    ['MAX_HEADER_SIZE', '4095'],
    ['MAX_HEADER_SIZE', '65537'],
    ['AUTH_MODE', 'none'],
    ['AUTH_MODE', 'Anonymous'],
    ['REQUEST_TIMEOUT_MS', '999'],
    ['REQUEST_TIMEOUT_MS', '600001'],
    ['HEADERS_TIMEOUT_MS', '999'],
    ['HEADERS_TIMEOUT_MS', 'soon'],
    ['KEEP_ALIVE_TIMEOUT_MS', '99'],
    ['SHUTDOWN_TIMEOUT_MS', '99'],
    ['SHUTDOWN_TIMEOUT_MS', '120001'],
    ['IDEMPOTENCY_TTL_HOURS', '0'],
    ['IDEMPOTENCY_TTL_HOURS', '721'],
    ['CURSOR_SECRET', 's'.repeat(31)],
  ])('throws a ConfigError naming %s for %j', (variable, value) => {
    const error = configErrorOf({ [variable]: value });
    expect(error.variable).toBe(variable);
    expect(error.message.startsWith(`${variable} `)).toBe(true);
    expect(error.name).toBe('ConfigError');
  });

  it('quotes the bad value in the message', () => {
    expect(configErrorOf({ PORT: 'abc' }).message).toContain('"abc"');
    expect(configErrorOf({ LOG_LEVEL: 'verbose' }).message).toContain('verbose');
  });

  it('does not reveal a too short CURSOR_SECRET in the message', () => {
    const secret = 'my-short-secret';
    expect(configErrorOf({ CURSOR_SECRET: secret }).message).not.toContain(secret);
  });

  it('rejects HEADERS_TIMEOUT_MS above REQUEST_TIMEOUT_MS', () => {
    const error = configErrorOf({ REQUEST_TIMEOUT_MS: '5000', HEADERS_TIMEOUT_MS: '5001' });
    expect(error.variable).toBe('HEADERS_TIMEOUT_MS');
    expect(error.message).toContain('REQUEST_TIMEOUT_MS');
  });

  it('rejects the default HEADERS_TIMEOUT_MS when REQUEST_TIMEOUT_MS is lowered below it', () => {
    expect(configErrorOf({ REQUEST_TIMEOUT_MS: '5000' }).variable).toBe('HEADERS_TIMEOUT_MS');
  });

  it('reads the JWT settings as a set, with defaults for algorithms and tolerance', () => {
    expect(
      loadConfig({
        JWT_JWKS_URL: 'https://id.example/jwks',
        JWT_ISSUER: 'https://id.example/',
        JWT_AUDIENCE: 'todo-api',
      }).jwt,
    ).toEqual({
      jwksUrl: 'https://id.example/jwks',
      issuer: 'https://id.example/',
      audience: 'todo-api',
      algorithms: ['RS256', 'ES256', 'EdDSA'],
      clockToleranceSeconds: 30,
    });
    expect(configErrorOf({ JWT_JWKS_URL: 'https://id.example/jwks' }).variable).toBe('JWT_ISSUER');
    expect(configErrorOf({ JWT_AUDIENCE: 'todo-api' }).variable).toBe('JWT_AUDIENCE');
    expect(
      configErrorOf({
        JWT_JWKS_URL: 'https://id.example/jwks',
        JWT_ISSUER: 'i',
        JWT_AUDIENCE: 'a',
        JWT_ALGORITHMS: 'RS256,HS256',
      }).variable,
    ).toBe('JWT_ALGORITHMS');
  });

  it('reads TRUST_PROXY as addresses and CIDR ranges', () => {
    expect(loadConfig({ TRUST_PROXY: '127.0.0.1, 10.0.0.0/8,::1' }).trustProxy).toEqual([
      '127.0.0.1',
      '10.0.0.0/8',
      '::1',
    ]);
    expect(configErrorOf({ TRUST_PROXY: 'proxy.example' }).variable).toBe('TRUST_PROXY');
    expect(configErrorOf({ TRUST_PROXY: '10.0.0.0/33' }).variable).toBe('TRUST_PROXY');
  });

  it('refuses a REDIS_URL that is not redis:// or rediss://', () => {
    expect(configErrorOf({ REDIS_URL: 'http://127.0.0.1:6379' }).variable).toBe('REDIS_URL');
    expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).redisUrl).toBe(
      'redis://127.0.0.1:6379',
    );
  });

  it('names the first bad variable when several are bad', () => {
    expect(configErrorOf({ PORT: 'x', LOG_LEVEL: 'y' }).variable).toBe('PORT');
  });
});

describe('isLoopbackHost', () => {
  it.each([
    ['localhost', true],
    ['127.0.0.1', true],
    ['127.255.0.9', true],
    ['::1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['10.0.0.1', false],
    ['127.example.com', false],
    ['localhost.example.com', false],
  ])('%s → %s', (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });
});

describe('authRequired', () => {
  it.each([
    ['auto', '127.0.0.1', false],
    ['auto', '::1', false],
    ['auto', '0.0.0.0', true],
    ['auto', '10.1.2.3', true],
    ['required', '127.0.0.1', true],
    ['anonymous', '0.0.0.0', false],
  ] as const)('AUTH_MODE=%s on %s → %s', (authMode, host, expected) => {
    expect(authRequired({ authMode, host })).toBe(expected);
  });
});
