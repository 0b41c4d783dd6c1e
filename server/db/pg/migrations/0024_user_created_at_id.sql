-- Hand-written (drizzle-kit generate --custom): the directory's order as the only createdAt index.
-- The LDAP directory (features/ldap/directory-index.ts) reads everyone in keyset chunks ordered by
-- ("createdAt", id). PostgreSQL has had "user_created_at_id_idx" on ("createdAt", id) since 0004
-- (list users); SQLite gets it in its 0023, which replaces its index of "createdAt" alone, and the
-- schema mirror now names it. The index of "createdAt" alone is redundant beside it: dropped.
CREATE INDEX IF NOT EXISTS "user_created_at_id_idx" ON "user" USING btree ("createdAt", "id");
--> statement-breakpoint
DROP INDEX IF EXISTS "user_created_at_idx";
