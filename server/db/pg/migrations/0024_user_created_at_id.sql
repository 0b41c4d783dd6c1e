-- Hand-written (drizzle-kit generate --custom): the directory's order as an index. The LDAP
-- directory (features/ldap/directory-index.ts) reads everyone in keyset chunks ordered by
-- ("createdAt", id), `("createdAt", id) > ($1, $2)`: an index of both answers the row comparison as
-- one index range in that order, where the index of "createdAt" alone left ties to a sort. It
-- serves every query the old one did (its leading column) and replaces it.
CREATE INDEX IF NOT EXISTS "user_created_at_id_idx" ON "user" USING btree ("createdAt", "id");
--> statement-breakpoint
DROP INDEX IF EXISTS "user_created_at_idx";
