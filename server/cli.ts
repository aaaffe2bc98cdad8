// The `memory-ledger` command: `serve` (default) runs the HTTP server.
import { ConfigError } from './config.ts';
import { runStdio } from './mcp/stdio.ts';
import { runServe } from './serve.ts';
import { runBundleCli } from './bundle-cli.ts';
import { runSyncCli } from './sync-cli.ts';

const USAGE = `usage: memory-ledger <command>
  serve                 run the HTTP server (REST at /v1, MCP at /mcp) on SVC_DATA_DIR
  stdio                 serve the MCP tools over stdin/stdout (open, tenant SVC_TENANT) on SVC_DATA_DIR
  bundle FILE ...       read an export bundle offline: list | get ID | why ID | verify (see bundle --help)
  pull BASE_URL DIR     export a ledger into a folder (--as-of, --space); key from SVC_API_KEY
  push DIR BASE_URL     write a pulled folder into a ledger, batch by batch; key from SVC_API_KEY`;

const commands: Record<string, (args: string[]) => Promise<void>> = {
  serve: async () => runServe(),
  stdio: async () => runStdio(),
  bundle: async (args) => { process.exitCode = await runBundleCli(args); },
  pull: async (args) => { process.exitCode = await runSyncCli('pull', args); },
  push: async (args) => { process.exitCode = await runSyncCli('push', args); },
};

async function main(argv: string[]): Promise<void> {
  const [name = 'serve', ...rest] = argv;
  if (name === '--help' || name === '-h' || name === 'help') {
    console.log(USAGE);
    return;
  }
  const command = commands[name];
  if (!command) {
    console.error(`unknown command "${name}"\n${USAGE}`);
    process.exit(2);
  }
  await command(rest);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(`configuration: ${error.message}`);
  else console.error(error);
  process.exit(1);
});
