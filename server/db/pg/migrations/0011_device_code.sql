CREATE TABLE "deviceCode" (
	"id" text PRIMARY KEY NOT NULL,
	"deviceCode" text NOT NULL,
	"userCode" text NOT NULL,
	"userId" text,
	"expiresAt" timestamp (3) with time zone NOT NULL,
	"status" text NOT NULL,
	"lastPolledAt" timestamp (3) with time zone,
	"pollingInterval" bigint,
	"clientId" text,
	"scope" text
);
--> statement-breakpoint
CREATE UNIQUE INDEX "deviceCode_deviceCode_unique" ON "deviceCode" USING btree ("deviceCode");--> statement-breakpoint
CREATE UNIQUE INDEX "deviceCode_userCode_unique" ON "deviceCode" USING btree ("userCode");--> statement-breakpoint
CREATE INDEX "deviceCode_expires_at_idx" ON "deviceCode" USING btree ("expiresAt");