/**
 * `npx tsx bench/profile-summary.ts <file.cpuprofile> [top]`: where a V8 CPU profile (from
 * `npm run bench -- --profile`) spends its time, by function (self time) and by package or
 * source folder, plus the inclusive time of the service's own modules.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './processes.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
}

const [target, topArg] = process.argv.slice(2);
if (!target) {
  console.error('usage: npx tsx bench/profile-summary.ts <file.cpuprofile | directory> [top]');
  process.exit(2);
}

/** Samples that are not idle: a directory holds one profile per thread; the busiest wins. */
function busySamples(path: string): number {
  const { nodes } = JSON.parse(readFileSync(path, 'utf8')) as Profile;
  const idle = new Set(nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
  const { samples = [] } = JSON.parse(readFileSync(path, 'utf8')) as Profile;
  return samples.filter((id) => !idle.has(id)).length;
}
const file = statSync(target).isDirectory()
  ? (readdirSync(target)
      .filter((name) => name.endsWith('.cpuprofile'))
      .map((name) => join(target, name))
      .sort((a, b) => busySamples(b) - busySamples(a))[0] ?? target)
  : target;
const top = Number.isInteger(Number(topArg)) ? Number(topArg) : 30;
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
// Node's profiles carry `samples` (node ids) rather than per-node hit counts.
if (profile.samples && profile.nodes.every((node) => !node.hitCount)) {
  const hits = new Map<number, number>();
  for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
  for (const node of profile.nodes) node.hitCount = hits.get(node.id) ?? 0;
}
const totalHits = profile.nodes.reduce((sum, node) => sum + (node.hitCount ?? 0), 0);
const msPerHit = (profile.endTime - profile.startTime) / 1000 / Math.max(1, totalHits);

/**
 * The service runs compiled (`dist/`, see `SERVICE_SCRIPT`): its frames are shown as `src/`
 * (line numbers are those of the compiled JavaScript).
 */
const COMPILED = pathToFileURL(join(ROOT, 'dist')).href + '/';
for (const node of profile.nodes) {
  const { url } = node.callFrame;
  if (url.startsWith(COMPILED)) node.callFrame.url = `/src/${url.slice(COMPILED.length)}`;
}

/** `node_modules/<package>`, `src/<folder>`, `node:internal`, or the special V8 frames. */
function groupOf(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules?.[1]) return modules[1];
  const source = /\/(src|bench|test)\/([^/]+)/.exec(url);
  if (source?.[1] && source[2]) return `${source[1]}/${source[2]}`;
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  return url;
}

const byFunction = new Map<string, number>();
const byGroup = new Map<string, number>();
for (const node of profile.nodes) {
  const hits = node.hitCount ?? 0;
  if (hits === 0) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  const short = url.replace(/^.*\/(node_modules|src|bench)\//, '$1/');
  const key = `${functionName || '(anonymous)'}  ${short}:${lineNumber + 1}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + hits);
  const group = groupOf(url, functionName);
  byGroup.set(group, (byGroup.get(group) ?? 0) + hits);
}

// Inclusive time of frames in src/: time spent in a service function or anything it calls.
const nodesById = new Map(profile.nodes.map((node) => [node.id, node]));
const inclusive = new Map<number, number>();
function total(node: ProfileNode): number {
  const cached = inclusive.get(node.id);
  if (cached !== undefined) return cached;
  let sum = node.hitCount ?? 0;
  for (const child of node.children ?? []) {
    const childNode = nodesById.get(child);
    if (childNode) sum += total(childNode);
  }
  inclusive.set(node.id, sum);
  return sum;
}
const bySourceInclusive = new Map<string, number>();
for (const node of profile.nodes) {
  const { functionName, url, lineNumber } = node.callFrame;
  if (!url.includes('/src/')) continue;
  const key = `${functionName || '(anonymous)'}  ${url.replace(/^.*\/src\//, 'src/')}:${lineNumber + 1}`;
  bySourceInclusive.set(key, (bySourceInclusive.get(key) ?? 0) + total(node));
}

function print(title: string, entries: Map<string, number>, limit: number) {
  console.log(`\n${title}`);
  const sorted = [...entries.entries()].sort((a, b) => b[1] - a[1]).slice(0, limit);
  for (const [key, hits] of sorted) {
    const share = ((hits / Math.max(1, totalHits)) * 100).toFixed(1).padStart(5);
    console.log(`${share}%  ${(hits * msPerHit).toFixed(0).padStart(7)} ms  ${key}`);
  }
}

console.log(
  `${file}: ${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s, ${totalHits} samples`,
);
print('Self time by package / source folder', byGroup, top);
print('Self time by function', byFunction, top);
print('Inclusive time of service functions (src/)', bySourceInclusive, top);
