CREATE TABLE `appPassword` (
	`id` text PRIMARY KEY NOT NULL,
	`userId` text NOT NULL,
	`name` text NOT NULL,
	`hash` text NOT NULL,
	`hint` text NOT NULL,
	`createdAt` integer NOT NULL,
	`expiresAt` integer,
	`lastUsedAt` integer,
	FOREIGN KEY (`userId`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `appPassword_userId_idx` ON `appPassword` (`userId`);--> statement-breakpoint
CREATE UNIQUE INDEX `appPassword_hash_unique` ON `appPassword` (`hash`);