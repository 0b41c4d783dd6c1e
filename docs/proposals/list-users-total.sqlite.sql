-- Proposal (docs/proposals/list-users-total.md): what makes the exact `total` of admin list-users
-- cheap on SQLite at 1 000 000 users. Hand-written; at merge it becomes a drizzle-kit --custom
-- migration (the indexes can also be declared in core-schema.ts, the table and triggers cannot).

-- starts_with: a range on lower(email) answers "email LIKE 'li%'" (ASCII case-insensitive, as
-- SQLite's LIKE and lower() without ICU) from the index alone.
CREATE INDEX IF NOT EXISTS `user_email_lower_idx` ON `user` (lower(`email`));

CREATE INDEX IF NOT EXISTS `user_name_lower_idx` ON `user` (lower(`name`));

-- Filters combined with a search or a sort still want these.
CREATE INDEX IF NOT EXISTS `user_role_idx` ON `user` (`role`, `createdAt`);

CREATE INDEX IF NOT EXISTS `user_banned_idx` ON `user` (coalesce(`banned`, 0), `createdAt`);

-- The maintained count: users per exact role string and ban state, kept by triggers in the same
-- transaction as the write (so it is exactly as current as the user table). Answers the total of
-- "role eq X", "banned eq B" and "everyone" with one or a few index lookups.
CREATE TABLE IF NOT EXISTS `userCount` (
  `role` text NOT NULL,
  `banned` integer NOT NULL,
  `n` integer NOT NULL,
  PRIMARY KEY (`role`, `banned`)
) WITHOUT ROWID;

DELETE FROM `userCount`;

INSERT INTO `userCount` (`role`, `banned`, `n`)
  SELECT coalesce(`role`, ''), coalesce(`banned`, 0), count(*) FROM `user` GROUP BY 1, 2;

CREATE TRIGGER IF NOT EXISTS `user_count_insert` AFTER INSERT ON `user` BEGIN
  INSERT INTO `userCount` (`role`, `banned`, `n`) VALUES (coalesce(new.`role`, ''), coalesce(new.`banned`, 0), 1)
    ON CONFLICT (`role`, `banned`) DO UPDATE SET `n` = `n` + 1;
END;

CREATE TRIGGER IF NOT EXISTS `user_count_delete` AFTER DELETE ON `user` BEGIN
  UPDATE `userCount` SET `n` = `n` - 1 WHERE `role` = coalesce(old.`role`, '') AND `banned` = coalesce(old.`banned`, 0);
END;

CREATE TRIGGER IF NOT EXISTS `user_count_update` AFTER UPDATE OF `role`, `banned` ON `user`
  WHEN coalesce(old.`role`, '') IS NOT coalesce(new.`role`, '') OR coalesce(old.`banned`, 0) IS NOT coalesce(new.`banned`, 0)
BEGIN
  UPDATE `userCount` SET `n` = `n` - 1 WHERE `role` = coalesce(old.`role`, '') AND `banned` = coalesce(old.`banned`, 0);
  INSERT INTO `userCount` (`role`, `banned`, `n`) VALUES (coalesce(new.`role`, ''), coalesce(new.`banned`, 0), 1)
    ON CONFLICT (`role`, `banned`) DO UPDATE SET `n` = `n` + 1;
END;
