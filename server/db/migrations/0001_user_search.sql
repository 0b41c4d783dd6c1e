-- Substring search for admin list-users (SPEC §7): a trigram full-text index over user.email and
-- user.name, kept in step with the user table by triggers. Rows are keyed by the user id (stored,
-- not indexed) rather than by the user table's implicit rowid, which VACUUM may renumber.
-- Queries only use it to narrow candidates and re-check with LIKE, so it can never add a wrong row.
CREATE VIRTUAL TABLE `user_search` USING fts5(`userId` UNINDEXED, `email`, `name`, tokenize = 'trigram');
--> statement-breakpoint
INSERT INTO `user_search` (`userId`, `email`, `name`) SELECT `id`, `email`, `name` FROM `user`;
--> statement-breakpoint
CREATE TRIGGER `user_search_insert` AFTER INSERT ON `user` BEGIN
  INSERT INTO `user_search` (`userId`, `email`, `name`) VALUES (new.`id`, new.`email`, new.`name`);
END;
--> statement-breakpoint
CREATE TRIGGER `user_search_delete` AFTER DELETE ON `user` BEGIN
  DELETE FROM `user_search` WHERE rowid IN (
    SELECT rowid FROM `user_search`
    WHERE `user_search` MATCH ('email : "' || replace(old.`email`, '"', '""') || '"') AND `userId` = old.`id`
  );
  DELETE FROM `user_search` WHERE length(old.`email`) < 3 AND `userId` = old.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `user_search_update` AFTER UPDATE OF `email`, `name` ON `user` BEGIN
  DELETE FROM `user_search` WHERE rowid IN (
    SELECT rowid FROM `user_search`
    WHERE `user_search` MATCH ('email : "' || replace(old.`email`, '"', '""') || '"') AND `userId` = old.`id`
  );
  DELETE FROM `user_search` WHERE length(old.`email`) < 3 AND `userId` = old.`id`;
  INSERT INTO `user_search` (`userId`, `email`, `name`) VALUES (new.`id`, new.`email`, new.`name`);
END;
--> statement-breakpoint
CREATE VIRTUAL TABLE `user_search_vocab` USING fts5vocab(`user_search`, 'col');
