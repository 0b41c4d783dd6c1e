#!/usr/bin/env node
// Runs a TypeScript entry point with the same loader as the CLI: node bin/run-ts.js file.ts [args]
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { register } from 'tsx/esm/api'

register()
const [entry, ...rest] = process.argv.slice(2)
process.argv = [process.argv[0], entry, ...rest]
await import(pathToFileURL(resolve(entry)).href)
