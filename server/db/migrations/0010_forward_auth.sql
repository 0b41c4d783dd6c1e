CREATE TABLE `forwardAuthCount` (
	`app` text NOT NULL,
	`hour` integer NOT NULL,
	`allowed` integer NOT NULL,
	PRIMARY KEY(`app`, `hour`)
);
--> statement-breakpoint
CREATE TABLE `twoFactorSession` (
	`sessionId` text PRIMARY KEY NOT NULL,
	`method` text NOT NULL,
	`createdAt` integer NOT NULL,
	FOREIGN KEY (`sessionId`) REFERENCES `session`(`id`) ON UPDATE no action ON DELETE cascade
);
