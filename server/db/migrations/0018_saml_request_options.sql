ALTER TABLE `samlRequest` ADD `forceAuthn` integer;--> statement-breakpoint
ALTER TABLE `samlRequest` ADD `isPassive` integer;