-- Hand-written (drizzle-kit generate --custom): the directory's own change counter. The LDAP
-- directory keeps everyone it shows in memory (features/ldap/directory-index.ts); the database's
-- change signal moves at any write (a session, an audit row, a throttle row), which emptied it at
-- every sign-in. Each committed write to what the directory shows (a person's shown columns, an
-- organization, a membership, a team) moves `changeScope.version` of the scope 'directory' in the
-- same transaction, whoever wrote (this process, the CLI, SQL by hand): the directory reads it
-- only when the database's signal moved, and starts over only when it did.
CREATE TABLE `changeScope` (
	`scope` text PRIMARY KEY NOT NULL,
	`version` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `changeScope` (`scope`, `version`) VALUES ('directory', 0);
--> statement-breakpoint
CREATE TRIGGER `directory_user_insert` AFTER INSERT ON `user` BEGIN UPDATE `changeScope` SET `version` = `version` + 1 WHERE `scope` = 'directory'; END;
--> statement-breakpoint
CREATE TRIGGER `directory_user_delete` AFTER DELETE ON `user` BEGIN UPDATE `changeScope` SET `version` = `version` + 1 WHERE `scope` = 'directory'; END;
--> statement-breakpoint
CREATE TRIGGER `directory_user_update` AFTER UPDATE OF `id`, `name`, `email`, `emailVerified`, `createdAt`, `updatedAt`, `username`, `displayUsername`, `role`, `banned`, `banExpires`, `isAnonymous` ON `user` BEGIN UPDATE `changeScope` SET `version` = `version` + 1 WHERE `scope` = 'directory'; END;
--> statement-breakpoint
CREATE TRIGGER `directory_organization_insert` AFTER INSERT ON `organization` BEGIN UPDATE `changeScope` SET `version` = `version` + 1 WHERE `scope` = 'directory'; END;
--> statement-breakpoint
CREATE TRIGGER `directory_organization_update` AFTER UPDATE ON `organization` BEGIN UPDATE `changeScope` SET `version` = `version` + 1 WHERE `scope` = 'directory'; END;
--> statement-breakpoint
CREATE TRIGGER `directory_organization_delete` AFTER DELETE ON `organization` BEGIN UPDATE `changeScope` SET `version` = `version` + 1 WHERE `scope` = 'directory'; END;
--> statement-breakpoint
CREATE TRIGGER `directory_member_insert` AFTER INSERT ON `member` BEGIN UPDATE `changeScope` SET `version` = `version` + 1 WHERE `scope` = 'directory'; END;
--> statement-breakpoint
CREATE TRIGGER `directory_member_update` AFTER UPDATE ON `member` BEGIN UPDATE `changeScope` SET `version` = `version` + 1 WHERE `scope` = 'directory'; END;
--> statement-breakpoint
CREATE TRIGGER `directory_member_delete` AFTER DELETE ON `member` BEGIN UPDATE `changeScope` SET `version` = `version` + 1 WHERE `scope` = 'directory'; END;
--> statement-breakpoint
CREATE TRIGGER `directory_team_insert` AFTER INSERT ON `team` BEGIN UPDATE `changeScope` SET `version` = `version` + 1 WHERE `scope` = 'directory'; END;
--> statement-breakpoint
CREATE TRIGGER `directory_team_update` AFTER UPDATE ON `team` BEGIN UPDATE `changeScope` SET `version` = `version` + 1 WHERE `scope` = 'directory'; END;
--> statement-breakpoint
CREATE TRIGGER `directory_team_delete` AFTER DELETE ON `team` BEGIN UPDATE `changeScope` SET `version` = `version` + 1 WHERE `scope` = 'directory'; END;
--> statement-breakpoint
CREATE TRIGGER `directory_teamMember_insert` AFTER INSERT ON `teamMember` BEGIN UPDATE `changeScope` SET `version` = `version` + 1 WHERE `scope` = 'directory'; END;
--> statement-breakpoint
CREATE TRIGGER `directory_teamMember_update` AFTER UPDATE ON `teamMember` BEGIN UPDATE `changeScope` SET `version` = `version` + 1 WHERE `scope` = 'directory'; END;
--> statement-breakpoint
CREATE TRIGGER `directory_teamMember_delete` AFTER DELETE ON `teamMember` BEGIN UPDATE `changeScope` SET `version` = `version` + 1 WHERE `scope` = 'directory'; END;
