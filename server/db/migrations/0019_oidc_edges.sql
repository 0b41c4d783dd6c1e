ALTER TABLE `oidcClient` ADD `subjectType` text DEFAULT 'public' NOT NULL;--> statement-breakpoint
ALTER TABLE `oidcClient` ADD `backchannelFailingSince` integer;--> statement-breakpoint
ALTER TABLE `oidcClient` ADD `backchannelLastError` text;