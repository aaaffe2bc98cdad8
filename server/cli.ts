// The `memory-ledger` command: `serve` (default) runs the HTTP server.
import { ConfigError } from './config.ts';
import { runStdio } from './mcp/stdio.ts';
import { runServe } from './serve.ts';

const USAGE = `usage: memory-ledger <command>
  serve                 run the HTTP server (REST at /v1, MCP at /mcp) on SVC_DATA_DIR
  stdio                 serve the MCP tools over stdin/stdout (open, tenant SVC_TENANT) on SVC_DATA_DIR`;

const commands: Record<string, (args: string[]) => Promise<void>> = {
  serve: async () => runServe(),
  stdio: async () => runStdio(),
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
