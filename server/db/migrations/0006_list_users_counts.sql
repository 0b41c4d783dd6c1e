-- list-users at 1 000 000 users (issue 14, docs/proposals/list-users-total.md): what keeps the exact
-- `total` cheap. Hand-written (drizzle-kit generate --custom): expression indexes, a table only
-- triggers write, and the triggers, none of which the drizzle schema can declare.

-- starts_with: a range on lower(col) answers "col LIKE 'li%'" for an ASCII prefix from the index
-- alone (SQLite's LIKE and lower() without ICU both fold ASCII only).
CREATE INDEX IF NOT EXISTS `user_email_lower_idx` ON `user` (lower(`email`));
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `user_name_lower_idx` ON `user` (lower(`name`));
--> statement-breakpoint
-- The role and ban filters' pages (and their counts when combined with a search).
CREATE INDEX IF NOT EXISTS `user_role_idx` ON `user` (`role`, `createdAt`);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `user_banned_idx` ON `user` (coalesce(`banned`, 0), `createdAt`);
--> statement-breakpoint
-- The maintained count: users per exact role string ('' for NULL) and ban state (NULL counts as
-- not banned), kept by triggers in the same transaction as the write, so exactly as current as the
-- user table. Answers the total of "everyone", "role eq X" and "banned eq B" with a few lookups.
CREATE TABLE IF NOT EXISTS `userCount` (
  `role` text NOT NULL,
  `banned` integer NOT NULL,
  `n` integer NOT NULL,
  PRIMARY KEY (`role`, `banned`)
) WITHOUT ROWID;
--> statement-breakpoint
DELETE FROM `userCount`;
--> statement-breakpoint
INSERT INTO `userCount` (`role`, `banned`, `n`)
  SELECT coalesce(`role`, ''), coalesce(`banned`, 0), count(*) FROM `user` GROUP BY 1, 2;
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS `user_count_insert` AFTER INSERT ON `user` BEGIN
  INSERT INTO `userCount` (`role`, `banned`, `n`) VALUES (coalesce(new.`role`, ''), coalesce(new.`banned`, 0), 1)
    ON CONFLICT (`role`, `banned`) DO UPDATE SET `n` = `n` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS `user_count_delete` AFTER DELETE ON `user` BEGIN
  UPDATE `userCount` SET `n` = `n` - 1 WHERE `role` = coalesce(old.`role`, '') AND `banned` = coalesce(old.`banned`, 0);
END;
--> statement-breakpoint
CREATE TRIGGER IF NOT EXISTS `user_count_update` AFTER UPDATE OF `role`, `banned` ON `user`
  WHEN coalesce(old.`role`, '') IS NOT coalesce(new.`role`, '') OR coalesce(old.`banned`, 0) IS NOT coalesce(new.`banned`, 0)
BEGIN
  UPDATE `userCount` SET `n` = `n` - 1 WHERE `role` = coalesce(old.`role`, '') AND `banned` = coalesce(old.`banned`, 0);
  INSERT INTO `userCount` (`role`, `banned`, `n`) VALUES (coalesce(new.`role`, ''), coalesce(new.`banned`, 0), 1)
    ON CONFLICT (`role`, `banned`) DO UPDATE SET `n` = `n` + 1;
END;
