CREATE TABLE "samlKey" (
	"id" text PRIMARY KEY NOT NULL,
	"certificate" text NOT NULL,
	"privateKey" text NOT NULL,
	"createdAt" timestamp (3) with time zone NOT NULL,
	"retiredAt" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "samlParticipant" (
	"id" text PRIMARY KEY NOT NULL,
	"sessionId" text NOT NULL,
	"userId" text NOT NULL,
	"spEntityId" text NOT NULL,
	"nameId" text NOT NULL,
	"nameIdFormat" text NOT NULL,
	"sessionIndex" text NOT NULL,
	"createdAt" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "samlRequest" (
	"id" text PRIMARY KEY NOT NULL,
	"spEntityId" text NOT NULL,
	"requestId" text,
	"relayState" text,
	"acsUrl" text NOT NULL,
	"createdAt" timestamp (3) with time zone NOT NULL,
	"expiresAt" timestamp (3) with time zone NOT NULL,
	"usedAt" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "samlServiceProvider" (
	"id" text PRIMARY KEY NOT NULL,
	"entityId" text NOT NULL,
	"name" text NOT NULL,
	"metadataXml" text NOT NULL,
	"nameIdFormat" text NOT NULL,
	"allowedGroups" jsonb NOT NULL,
	"createdAt" timestamp (3) with time zone NOT NULL,
	"updatedAt" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "samlParticipant_sessionId_idx" ON "samlParticipant" USING btree ("sessionId");--> statement-breakpoint
CREATE INDEX "samlParticipant_sessionIndex_idx" ON "samlParticipant" USING btree ("sessionIndex");--> statement-breakpoint
CREATE UNIQUE INDEX "samlRequest_sp_request_uidx" ON "samlRequest" USING btree ("spEntityId","requestId");--> statement-breakpoint
CREATE INDEX "samlRequest_expiresAt_idx" ON "samlRequest" USING btree ("expiresAt");