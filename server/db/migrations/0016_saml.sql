CREATE TABLE `samlKey` (
	`id` text PRIMARY KEY NOT NULL,
	`certificate` text NOT NULL,
	`privateKey` text NOT NULL,
	`createdAt` integer NOT NULL,
	`retiredAt` integer
);
--> statement-breakpoint
CREATE TABLE `samlParticipant` (
	`id` text PRIMARY KEY NOT NULL,
	`sessionId` text NOT NULL,
	`userId` text NOT NULL,
	`spEntityId` text NOT NULL,
	`nameId` text NOT NULL,
	`nameIdFormat` text NOT NULL,
	`sessionIndex` text NOT NULL,
	`createdAt` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `samlParticipant_sessionId_idx` ON `samlParticipant` (`sessionId`);--> statement-breakpoint
CREATE INDEX `samlParticipant_sessionIndex_idx` ON `samlParticipant` (`sessionIndex`);--> statement-breakpoint
CREATE TABLE `samlRequest` (
	`id` text PRIMARY KEY NOT NULL,
	`spEntityId` text NOT NULL,
	`requestId` text,
	`relayState` text,
	`acsUrl` text NOT NULL,
	`createdAt` integer NOT NULL,
	`expiresAt` integer NOT NULL,
	`usedAt` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `samlRequest_sp_request_uidx` ON `samlRequest` (`spEntityId`,`requestId`);--> statement-breakpoint
CREATE INDEX `samlRequest_expiresAt_idx` ON `samlRequest` (`expiresAt`);--> statement-breakpoint
CREATE TABLE `samlServiceProvider` (
	`id` text PRIMARY KEY NOT NULL,
	`entityId` text NOT NULL,
	`name` text NOT NULL,
	`metadataXml` text NOT NULL,
	`nameIdFormat` text NOT NULL,
	`allowedGroups` text NOT NULL,
	`createdAt` integer NOT NULL,
	`updatedAt` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `samlServiceProvider_entityId_unique` ON `samlServiceProvider` (`entityId`);