CREATE TABLE `oidcLogoutDelivery` (
	`id` text PRIMARY KEY NOT NULL,
	`clientId` text NOT NULL,
	`accountId` text NOT NULL,
	`sid` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`nextAttemptAt` integer NOT NULL,
	`claimedUntil` integer,
	`sentAt` integer,
	`lastError` text,
	`createdAt` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oidc_logout_delivery_client_sid_idx` ON `oidcLogoutDelivery` (`clientId`,`sid`);--> statement-breakpoint
CREATE INDEX `oidc_logout_delivery_next_attempt_at_idx` ON `oidcLogoutDelivery` (`nextAttemptAt`);--> statement-breakpoint
CREATE TABLE `oidcRegistrationToken` (
	`id` text PRIMARY KEY NOT NULL,
	`tokenHash` text NOT NULL,
	`usesLeft` integer,
	`used` integer DEFAULT 0 NOT NULL,
	`expiresAt` integer,
	`revokedAt` integer,
	`createdAt` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oidcRegistrationToken_tokenHash_unique` ON `oidcRegistrationToken` (`tokenHash`);--> statement-breakpoint
ALTER TABLE `oidcClient` ADD `backchannelLogoutUri` text;--> statement-breakpoint
ALTER TABLE `oidcClient` ADD `requirePar` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `oidcClient` ADD `registeredByToken` text;--> statement-breakpoint
ALTER TABLE `oidcClient` ADD `registeredMetadata` text;