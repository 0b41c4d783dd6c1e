import { defineConfig } from 'drizzle-kit'

export default defineConfig({
  dialect: 'sqlite',
  // The whole schema, assembled on the composition floor (core tables, features' columns and tables).
  schema: './server/schema.ts',
  out: './server/db/migrations',
})
