/**
 * `node --import <this file>`: appends the URL of every module the process loads to the file named
 * by GATEHOUSE_MODULE_TRACE (one a line), through a module loader hook. tests/bundle/ starts the
 * built server with it to prove that each lazily imported chunk of the bundle was actually loaded.
 */
import { register } from 'node:module'

if (process.env.GATEHOUSE_MODULE_TRACE)
  register('./module-trace-hooks.mjs', import.meta.url, { data: { file: process.env.GATEHOUSE_MODULE_TRACE } })
