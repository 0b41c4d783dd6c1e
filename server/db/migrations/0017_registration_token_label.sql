ALTER TABLE `oidcRegistrationToken` ADD `label` text;--> statement-breakpoint
ALTER TABLE `oidcRegistrationToken` ADD `createdBy` text;