-- Hand-written (drizzle-kit generate --custom): a person's memberships and team memberships read
-- from the index alone. The LDAP directory (features/ldap/store.ts sourcesColumn) reads each
-- person's organizations with their member role and their teams by `userId`, once per person at
-- each load; on the index of `userId` alone each of those reads also looked the row up in the table
-- (a hundred thousand people: 265 → 210 ms of SQLite a load). The indexes lead with `userId`, so
-- they serve every query the old ones did, and replace them.
CREATE INDEX IF NOT EXISTS `member_user_org_role_idx` ON `member` (`userId`, `organizationId`, `role`);
--> statement-breakpoint
DROP INDEX IF EXISTS `member_user_id_idx`;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `team_member_user_team_idx` ON `teamMember` (`userId`, `teamId`);
--> statement-breakpoint
DROP INDEX IF EXISTS `team_member_user_id_idx`;
