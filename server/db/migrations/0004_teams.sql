CREATE TABLE `teamMember` (
	`id` text PRIMARY KEY NOT NULL,
	`teamId` text NOT NULL,
	`userId` text NOT NULL,
	`createdAt` integer,
	FOREIGN KEY (`teamId`) REFERENCES `team`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`userId`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `team_member_team_user_unique` ON `teamMember` (`teamId`,`userId`);--> statement-breakpoint
CREATE INDEX `team_member_user_id_idx` ON `teamMember` (`userId`);--> statement-breakpoint
ALTER TABLE `session` ADD `activeTeamId` text;--> statement-breakpoint
INSERT INTO `teamMember` (`id`, `teamId`, `userId`, `createdAt`) SELECT lower(hex(randomblob(16))), `teamId`, `userId`, `createdAt` FROM `member` WHERE `teamId` IS NOT NULL;
