#!/usr/bin/env node
// The CLI runs the TypeScript sources through tsx's loader, so `npm install` is the whole build.
import { register } from 'tsx/esm/api';

register();
await import('../server/cli.ts');
