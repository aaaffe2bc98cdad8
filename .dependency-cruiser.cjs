// The import rules `npm test` holds the code to (`npm run deps`): no cycles, and dependencies that point
// one way, doors (server/, bridge/) → tools/ → storage/ and extract/.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle ties modules that should be layered; type-only imports count too.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'storage-is-below-the-doors',
      severity: 'error',
      comment: 'storage/ and extract/ never import the operations or the doors.',
      from: { path: '^(storage|extract)/' },
      to: { path: '^(tools|server|bridge)/' },
    },
    {
      name: 'tools-know-no-transport',
      severity: 'error',
      comment: 'An operation never sees HTTP or MCP: tools/ imports neither the doors nor Hono or the MCP SDK.',
      from: { path: '^tools/', pathNot: '\\.test\\.ts$' },
      to: { path: '^(server|bridge)/|node_modules/(hono|@hono|@modelcontextprotocol)/' },
    },
    {
      name: 'doors-do-not-lean-on-each-other',
      severity: 'error',
      comment: "The MCP door and the REST bridge share only what lives below them (and the app's Hono env type).",
      from: { path: '^server/mcp/' },
      to: { path: '^bridge/', dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.mjs', '.js'] },
  },
};
