CREATE TABLE `oidcConsent` (
	`userId` text NOT NULL,
	`clientId` text NOT NULL,
	`scopes` text NOT NULL,
	`claims` text NOT NULL,
	`grantId` text,
	`createdAt` integer NOT NULL,
	`updatedAt` integer NOT NULL,
	PRIMARY KEY(`userId`, `clientId`),
	FOREIGN KEY (`userId`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`clientId`) REFERENCES `oidcClient`(`clientId`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `oidc_consent_client_id_idx` ON `oidcConsent` (`clientId`);--> statement-breakpoint
ALTER TABLE `oidcClient` ADD `resourceServer` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `oidcClient` ADD `idTokenSignedResponseAlg` text DEFAULT 'RS256' NOT NULL;