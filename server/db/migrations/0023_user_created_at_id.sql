-- Hand-written (drizzle-kit generate --custom): the directory's order as an index. The LDAP
-- directory (features/ldap/directory-index.ts) reads everyone in keyset chunks ordered by
-- (`createdAt`, `id`), `(createdAt, id) > (?, ?)`; on the index of `createdAt` alone SQLite sorted
-- each chunk's ties on `id` in a temporary B-tree. The index of both serves every query the old
-- one did (its leading column) and replaces it.
CREATE INDEX IF NOT EXISTS `user_created_at_id_idx` ON `user` (`createdAt`, `id`);
--> statement-breakpoint
DROP INDEX IF EXISTS `user_created_at_idx`;
