-- Hand-written (drizzle-kit generate --custom): SQLite's 0024 on PostgreSQL. The LDAP directory
-- (features/ldap/store.ts sourcesColumn) reads each person's organizations with their member role
-- and their teams by "userId"; indexes of ("userId", "organizationId", "role") and ("userId",
-- "teamId") answer those reads from the index (an index-only scan where the table is vacuumed) and
-- serve every query the indexes of "userId" alone did, which they replace.
CREATE INDEX IF NOT EXISTS "member_user_org_role_idx" ON "member" USING btree ("userId", "organizationId", "role");
--> statement-breakpoint
DROP INDEX IF EXISTS "member_user_id_idx";
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "team_member_user_team_idx" ON "teamMember" USING btree ("userId", "teamId");
--> statement-breakpoint
DROP INDEX IF EXISTS "team_member_user_id_idx";
