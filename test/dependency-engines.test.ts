import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

/** The Node versions the service promises to run on: `engines` in package.json and LTS lines. */
const SUPPORTED_NODE = ['20.19.0', '22.13.0', '24.0.0'];

interface LockedPackage {
  readonly version?: string;
  // A few old packages give an array here, which has no `node`.
  readonly engines?: { readonly node?: unknown };
}

const lock = JSON.parse(readFileSync(new URL('../package-lock.json', import.meta.url), 'utf8')) as {
  readonly packages: Record<string, LockedPackage>;
};

describe('installed packages', () => {
  // An `npm update` can pull a transitive major that drops Node 20 (cookie 2 and
  // content-disposition 3 did: package.json overrides them back).
  it('each allow every supported Node version in their engines', () => {
    const refusing = Object.entries(lock.packages).flatMap(([path, locked]) => {
      const range = locked.engines?.node;
      if (typeof range !== 'string') return [];
      return SUPPORTED_NODE.filter((node) => !semver.satisfies(node, range)).map(
        (node) => `${path || 'todo-api'}@${locked.version ?? '?'} (${range}) refuses Node ${node}`,
      );
    });
    expect(refusing).toEqual([]);
  });
});
