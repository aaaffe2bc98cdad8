// The names the holder's door and its clients agree on, apart from the door itself: a client, and a
// starting holder before its ledger opens, import these without loading the app behind the door.
export const TENANT_HEADER = 'x-memory-ledger-tenant';
export const TOKEN_HEADER = 'x-memory-ledger-token';
export const SESSION_HEADER = 'x-memory-ledger-session';
export const SESSION_PATH = '/local/mcp';
