#!/usr/bin/env node
// Runs the TypeScript sources directly (no build step), so `npx gatehouse serve` works right
// after `npm install` on a fresh clone.
import { register } from 'tsx/esm/api'

register()
await import('../server/main.ts')
