import { main } from './cli.js'

// -1: a server is running and owns the process lifetime.
const code = await main(process.argv.slice(2))
if (code >= 0) process.exit(code)
