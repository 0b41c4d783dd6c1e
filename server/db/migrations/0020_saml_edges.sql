ALTER TABLE `samlKey` ADD `activatesAt` integer;--> statement-breakpoint
ALTER TABLE `samlRequest` ADD `source` text;--> statement-breakpoint
CREATE INDEX `samlRequest_source_idx` ON `samlRequest` (`source`,`expiresAt`);