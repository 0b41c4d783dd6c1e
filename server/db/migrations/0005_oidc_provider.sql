CREATE TABLE `oidcClient` (
	`clientId` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`logo` text,
	`redirectUris` text NOT NULL,
	`postLogoutRedirectUris` text NOT NULL,
	`secretHash` text,
	`public` integer DEFAULT false NOT NULL,
	`pkceRequired` integer DEFAULT true NOT NULL,
	`skipConsent` integer DEFAULT false NOT NULL,
	`allowedOrganizations` text NOT NULL,
	`allowedTeams` text NOT NULL,
	`createdAt` integer NOT NULL,
	`updatedAt` integer NOT NULL,
	`secretRotatedAt` integer
);
--> statement-breakpoint
CREATE TABLE `oidcModel` (
	`kind` text NOT NULL,
	`id` text NOT NULL,
	`payload` text NOT NULL,
	`grantId` text,
	`uid` text,
	`userCode` text,
	`gatehouseSessionId` text,
	`consumedAt` integer,
	`expiresAt` integer,
	PRIMARY KEY(`kind`, `id`)
);
--> statement-breakpoint
CREATE INDEX `oidc_model_grant_id_idx` ON `oidcModel` (`grantId`);--> statement-breakpoint
CREATE INDEX `oidc_model_uid_idx` ON `oidcModel` (`uid`);--> statement-breakpoint
CREATE INDEX `oidc_model_user_code_idx` ON `oidcModel` (`userCode`);--> statement-breakpoint
CREATE INDEX `oidc_model_gatehouse_session_id_idx` ON `oidcModel` (`gatehouseSessionId`);--> statement-breakpoint
CREATE INDEX `oidc_model_expires_at_idx` ON `oidcModel` (`expiresAt`);