CREATE TABLE "oidcLogoutDelivery" (
	"id" text PRIMARY KEY NOT NULL,
	"clientId" text NOT NULL,
	"accountId" text NOT NULL,
	"sid" text NOT NULL,
	"attempts" bigint DEFAULT 0 NOT NULL,
	"nextAttemptAt" timestamp (3) with time zone NOT NULL,
	"claimedUntil" timestamp (3) with time zone,
	"sentAt" timestamp (3) with time zone,
	"lastError" text,
	"createdAt" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "oidcRegistrationToken" (
	"id" text PRIMARY KEY NOT NULL,
	"tokenHash" text NOT NULL,
	"usesLeft" bigint,
	"used" bigint DEFAULT 0 NOT NULL,
	"expiresAt" timestamp (3) with time zone,
	"revokedAt" timestamp (3) with time zone,
	"createdAt" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "oidcClient" ADD COLUMN "backchannelLogoutUri" text;--> statement-breakpoint
ALTER TABLE "oidcClient" ADD COLUMN "requirePar" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "oidcClient" ADD COLUMN "registeredByToken" text;--> statement-breakpoint
ALTER TABLE "oidcClient" ADD COLUMN "registeredMetadata" jsonb;--> statement-breakpoint
CREATE UNIQUE INDEX "oidc_logout_delivery_client_sid_idx" ON "oidcLogoutDelivery" USING btree ("clientId","sid");--> statement-breakpoint
CREATE INDEX "oidc_logout_delivery_next_attempt_at_idx" ON "oidcLogoutDelivery" USING btree ("nextAttemptAt");