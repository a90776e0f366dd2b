import { describe, expect, it } from 'vitest';
import {
  BlockedTargetError,
  checkTarget,
  isAllowedAddress,
  type TargetPolicy,
} from './target-guard.js';

const STRICT: TargetPolicy = { allowLoopback: false, allowHttp: false, ports: [80, 443] };
const DEV: TargetPolicy = { allowLoopback: true, allowHttp: true, ports: [80, 443] };

const ruleOf = (url: string, policy = STRICT) => {
  try {
    checkTarget(url, policy);
    return 'allowed';
  } catch (error) {
    return error instanceof BlockedTargetError ? error.rule : 'other';
  }
};

describe('the webhook target guard', () => {
  it.each([
    ['127.0.0.1', false],
    ['10.1.2.3', false],
    ['172.31.255.255', false],
    ['192.168.1.1', false],
    ['100.64.0.1', false],
    ['169.254.169.254', false],
    ['0.0.0.0', false],
    ['255.255.255.255', false],
    ['224.0.0.251', false],
    ['::1', false],
    ['::', false],
    ['fd12:3456::1', false],
    ['fe80::1', false],
    ['ff02::1', false],
    ['::ffff:10.0.0.1', false],
    ['64:ff9b::a00:1', false],
    ['93.184.215.14', true],
    ['2606:2800:21f:cb07:6820:80da:af6b:8b2c', true],
    ['::ffff:93.184.215.14', true],
  ])('allows %s: %s', (address, allowed) => {
    expect(isAllowedAddress(address, STRICT)).toBe(allowed);
  });

  it('allows loopback only when told, and nothing else more', () => {
    expect(isAllowedAddress('127.0.0.1', DEV)).toBe(true);
    expect(isAllowedAddress('::1', DEV)).toBe(true);
    expect(isAllowedAddress('10.0.0.1', DEV)).toBe(false);
    expect(isAllowedAddress('169.254.169.254', DEV)).toBe(false);
  });

  it('checks scheme, credentials, port and literal addresses', () => {
    expect(ruleOf('https://93.184.215.14/hook')).toBe('allowed');
    expect(ruleOf('https://hooks.example.com/x')).toBe('allowed');
    expect(ruleOf('http://hooks.example.com/x')).toBe('scheme');
    expect(ruleOf('http://hooks.example.com/x', DEV)).toBe('allowed');
    expect(ruleOf('https://a:b@hooks.example.com/')).toBe('credentials');
    expect(ruleOf('https://hooks.example.com:8443/')).toBe('port');
    expect(ruleOf('https://0x7f000001/')).toBe('address');
    expect(ruleOf('https://[::ffff:7f00:1]/')).toBe('address');
    expect(ruleOf('https://127.0.0.1:9999/', DEV)).toBe('allowed');
    expect(ruleOf('//no-scheme')).toBe('url');
    expect(ruleOf(`https://${'a'.repeat(250)}.com/`)).toBe('host');
  });
});
