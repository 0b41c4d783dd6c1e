/**
 * Writes server/db/pg/schema.ts, the PostgreSQL mirror of the schema this floor assembles
 * (server/schema.ts), with db/pg/generate-schema.ts's renderer:
 *
 *   npx tsx server/gen-pg-schema.ts        # then: npx drizzle-kit generate --config drizzle.pg.config.ts --name <what>
 */
import { writeFileSync } from 'node:fs'
import './schema.js' // the tables, handed down as it loads
import { pgSchemaFile, renderPgSchema } from './db/pg/generate-schema.js'

writeFileSync(pgSchemaFile, renderPgSchema())
console.log(`wrote ${pgSchemaFile}`)
