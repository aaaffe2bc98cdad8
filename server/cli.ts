// The `memory-ledger` command. Help and --version answer from this file and cli-usage.ts alone; each
// command's module (and through it Kuzu and LanceDB) is imported only when that command runs.
import { AGENT_USAGE, BUNDLE_USAGE, MAIN_USAGE, MOVE_USAGE, SERVE_USAGE, STDIO_USAGE, SYNC_USAGE } from './cli-usage.ts';
import module from 'node:module';
import { SERVICE_VERSION } from './version.ts';

// V8 keeps the code it compiled for the command's modules between starts (in the system's temporary folder,
// or NODE_COMPILE_CACHE): a restart of the built server spends ~0.1–0.2 s of CPU less. Failing to cache only costs that.
module.enableCompileCache?.();

interface Command {
  usage: string;
  run: (args: string[]) => Promise<void>;
}

const commands: Record<string, Command> = {
  serve: { usage: SERVE_USAGE, run: async () => (await import('./serve.ts')).runServe() },
  stdio: { usage: STDIO_USAGE, run: async () => (await import('./mcp/stdio.ts')).runStdio() },
  bundle: {
    usage: BUNDLE_USAGE,
    run: async (args) => {
      process.exitCode = await (await import('./bundle-cli.ts')).runBundleCli(args);
    },
  },
  pull: {
    usage: SYNC_USAGE,
    run: async (args) => {
      process.exitCode = await (await import('./sync-cli.ts')).runSyncCli('pull', args);
    },
  },
  push: {
    usage: SYNC_USAGE,
    run: async (args) => {
      process.exitCode = await (await import('./sync-cli.ts')).runSyncCli('push', args);
    },
  },
  'placement-agent': {
    usage: AGENT_USAGE,
    run: async (args) => {
      process.exitCode = await (await import('./cluster/agent-cli.ts')).runAgentCli(args);
    },
  },
  move: {
    usage: MOVE_USAGE,
    run: async (args) => {
      process.exitCode = await (await import('./cluster/move-cli.ts')).runMoveCli(args);
    },
  },
};

const isHelp = (arg: string | undefined): boolean => arg === '--help' || arg === '-h' || arg === 'help';

async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  // A bare `memory-ledger` explains itself instead of starting a server someone did not ask for.
  if (name === undefined || isHelp(name)) {
    const topic = rest[0] !== undefined ? commands[rest[0]] : undefined;
    console.log(topic ? topic.usage : MAIN_USAGE);
    return;
  }
  if (name === '--version' || name === '-v' || name === 'version') {
    console.log(SERVICE_VERSION);
    return;
  }
  const command = commands[name];
  if (!command) {
    console.error(`unknown command "${name}"\n${MAIN_USAGE}`);
    process.exit(2);
  }
  // `serve --help` must never start a server, whatever else is on the line.
  if (rest.some((arg) => arg === '--help' || arg === '-h')) {
    console.log(command.usage);
    return;
  }
  // A server's process starts once more, at once, with the C allocator's settings (allocator.ts).
  if (name === 'serve' || name === 'stdio') (await import('./allocator.ts')).startWithAllocator();
  await command.run(rest);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  // By name, not instanceof: importing config.ts here would load Kuzu for every --help.
  if (error instanceof Error && (error.constructor.name === 'ConfigError' || error.name === 'ConfigError'))
    console.error(`configuration: ${error.message}`);
  else console.error(error);
  process.exit(1);
});
