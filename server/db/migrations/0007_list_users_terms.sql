-- list-users at 1 000 000 users (issue 14, docs/proposals/list-users-total.md, "Remembered term
-- totals"): the exact total of a search term that no index counts cheaply (a common substring such
-- as "example" or a first name) is counted once and then kept exact by triggers, in the same
-- transaction as every write to "user", whoever makes it (this server, the CLI, another process,
-- SQL by hand). Hand-written (drizzle-kit generate --custom): a table only the store and triggers
-- write, and triggers, which the drizzle schema cannot declare.
--
-- One row per remembered term: the searched column ('email' or 'name') and the exact LIKE pattern
-- of the query (escaped with '\'), the number of users it matches, and when it was last used (the
-- store keeps at most a few hundred terms and forgets the least recently used). The row is
-- inserted by one INSERT … SELECT count(*) statement, which holds the write lock from its read to
-- its commit, so no other write can fall between the count and the row.
CREATE TABLE IF NOT EXISTS `userTermCount` (
  `field` text NOT NULL,
  `pattern` text NOT NULL,
  `n` integer NOT NULL,
  `usedAt` integer NOT NULL,
  PRIMARY KEY (`field`, `pattern`)
) WITHOUT ROWID;
--> statement-breakpoint
-- The triggers test each remembered pattern with the very expression list-users filters with
-- (`col LIKE pattern ESCAPE '\'`, SQLite's ASCII-only case folding), so a count can never drift
-- from what a query would count. A NULL column matches nothing, as in the query.
CREATE TRIGGER IF NOT EXISTS `user_term_count_insert` AFTER INSERT ON `user` BEGIN
  UPDATE `userTermCount` SET `n` = `n` + 1
    WHERE coalesce((CASE `field` WHEN 'email' THEN new.`email` ELSE new.`name` END) LIKE `pattern` ESCAPE '\', 0);
END;
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS `user_term_count_delete` AFTER DELETE ON `user` BEGIN
  UPDATE `userTermCount` SET `n` = `n` - 1
    WHERE coalesce((CASE `field` WHEN 'email' THEN old.`email` ELSE old.`name` END) LIKE `pattern` ESCAPE '\', 0);
END;
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS `user_term_count_update` AFTER UPDATE OF `email`, `name` ON `user`
  WHEN new.`email` IS NOT old.`email` OR new.`name` IS NOT old.`name`
BEGIN
  UPDATE `userTermCount`
    SET `n` = `n`
      + coalesce((CASE `field` WHEN 'email' THEN new.`email` ELSE new.`name` END) LIKE `pattern` ESCAPE '\', 0)
      - coalesce((CASE `field` WHEN 'email' THEN old.`email` ELSE old.`name` END) LIKE `pattern` ESCAPE '\', 0)
    WHERE coalesce((CASE `field` WHEN 'email' THEN new.`email` ELSE new.`name` END) LIKE `pattern` ESCAPE '\', 0)
       <> coalesce((CASE `field` WHEN 'email' THEN old.`email` ELSE old.`name` END) LIKE `pattern` ESCAPE '\', 0);
END;
